"""What the workloads in plain JAX share (dlbench/models/workloads/<model>/in_jax.py),
layer for layer as the Keras definitions (in_keras.py): parameters are
pytrees of arrays (dicts and lists), a model is its parameters and a pure
``forward(params, x, key=None)`` that returns logits; ``key`` is the step's
PRNG key for dropout (None: inference, no dropout). Same layers, parameter
counts and initial weight distributions as Keras: Glorot-uniform kernels
(dense, convolution, recurrent inputs), orthogonal recurrent kernels, zero
biases (LSTM forget gate 1), embeddings uniform in +-0.05, batch norm with
Keras' epsilon and moving statistics. Images are channels-last, as Keras and
the prepared data have them. Importable without jax until a model is built."""

from dlbench.models.layers import LOSS_SCALE_GROWTH_INTERVAL, LOSS_SCALE_INITIAL, dropout_on

# The shared initial weights (dlbench.models.initial_weights) are in Keras' layout,
# which is this family's: channels-last kernels, the same gate order and
# biases. Only the names differ.
KERAS_NAMES = {
    "kernel": "w",
    "recurrent_kernel": "u",
    "bias": "b",
    "gamma": "gamma",
    "beta": "beta",
    "moving_mean": "mean",
    "moving_variance": "var",
}
LAYER_KEYS = set(KERAS_NAMES.values())


def _kind(unit):
    """The Keras class whose weights a parameter unit holds."""
    if not isinstance(unit, dict):
        return "Embedding"
    if "gamma" in unit:
        return "BatchNormalization"
    if "u" in unit:
        return "GRUCell" if unit["b"].ndim == 2 else "LSTMCell"
    return "Conv2D" if unit["w"].ndim == 4 else "Dense"


def load_keras_weights(jax, params, layout, weights):
    """``params`` with the shared initial weights in place of its own draw:
    its layers (in the order the builder wrote them) take the Keras layers of
    their kind in order; every shape is checked before anything is replaced."""
    import numpy as np

    from dlbench.models import initial_weights as shared

    waiting = shared.by_layer(layout, weights)

    def replaced(unit):
        if isinstance(unit, (list, tuple)):
            return type(unit)(replaced(item) for item in unit)
        if isinstance(unit, dict) and not set(unit) <= LAYER_KEYS:
            return {name: replaced(item) for name, item in unit.items()}
        kind = _kind(unit)
        matching = [group for group in waiting if group[0] == kind]
        if not matching:
            raise ValueError("no Keras layer left for a JAX {} layer".format(kind))
        waiting.remove(matching[0])
        arrays = matching[0][1]
        if kind == "Embedding":
            found = {"embeddings": unit}
        else:
            found = {keras: unit[mine] for keras, mine in KERAS_NAMES.items() if mine in unit}
        if sorted(found) != sorted(arrays):
            raise ValueError(
                "a JAX {} holds {}, Keras' {}".format(kind, sorted(found), sorted(arrays))
            )
        for name, mine in found.items():
            if tuple(mine.shape) != arrays[name].shape:
                raise ValueError(
                    "{}.{}: JAX's shape {} is not Keras' {}".format(
                        kind, name, tuple(mine.shape), arrays[name].shape
                    )
                )
        if kind == "Embedding":
            return np.asarray(arrays["embeddings"])
        return {KERAS_NAMES[name]: np.asarray(values) for name, values in arrays.items()}

    loaded = replaced(params)
    if waiting:
        raise ValueError("{} Keras layers have no JAX counterpart".format(len(waiting)))
    return jax.tree_util.tree_map(jax.numpy.asarray, loaded)


def split_keys(jax, key, count):
    """``count`` keys from ``key``; ``count`` Nones without one."""
    return [None] * count if key is None else list(jax.random.split(key, count))


def dense(jax, key, n_in, n_out):
    kernel = jax.nn.initializers.glorot_uniform()(key, (n_in, n_out))
    return {"w": kernel, "b": jax.numpy.zeros((n_out,))}


def conv(jax, key, size, n_in, n_out):
    """An HWIO kernel: Glorot over the receptive field, as Keras' Conv2D."""
    kernel = jax.nn.initializers.glorot_uniform()(key, (size, size, n_in, n_out))
    return {"w": kernel, "b": jax.numpy.zeros((n_out,))}


def linear(layer, x):
    return x @ layer["w"] + layer["b"]


def convolve(jax, layer, x, padding="VALID", stride=1):
    y = jax.lax.conv_general_dilated(
        x, layer["w"], (stride, stride), padding, dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    return y + layer["b"]


def max_pool(jax, x, size=2, stride=2):
    window, strides = (1, size, size, 1), (1, stride, stride, 1)
    return jax.lax.reduce_window(x, -jax.numpy.inf, jax.lax.max, window, strides, "VALID")


def dropout(jax, key, x, rate):
    """Inverted dropout as Keras': kept units scaled by 1 / (1 - rate)."""
    if key is None or not dropout_on():
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jax.numpy.where(keep, x / (1.0 - rate), 0.0)


def flatten(x):
    return x.reshape((x.shape[0], -1))


def embedding(jax, key, vocabulary, width):
    """Keras' Embedding: uniform in +-0.05."""
    return jax.random.uniform(key, (vocabulary, width), minval=-0.05, maxval=0.05)


def lstm_init(jax, key, n_in, units):
    """Keras' LSTM: gates i, f, c, o side by side; forget-gate bias 1."""
    keys = jax.random.split(key, 2)
    return {
        "w": jax.nn.initializers.glorot_uniform()(keys[0], (n_in, 4 * units)),
        "u": jax.nn.initializers.orthogonal()(keys[1], (units, 4 * units)),
        "b": jax.numpy.zeros((4 * units,)).at[units : 2 * units].set(1.0),
    }


def lstm(jax, layer, x):
    """The last output of an LSTM over (batch, time, features), a lax.scan
    over time. Each step projects its own input, as Keras' cell does
    (projecting all steps at once made XLA's CPU training step ~1.8x slower)."""
    jnp, sigmoid = jax.numpy, jax.nn.sigmoid

    def cell(carry, x_t):
        h, c = carry
        i, f, g, o = jnp.split(x_t @ layer["w"] + layer["b"] + h @ layer["u"], 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * jnp.tanh(g)
        h = sigmoid(o) * jnp.tanh(c)
        return (h, c), None

    zeros = jnp.zeros((x.shape[0], layer["u"].shape[0]), x.dtype)
    (h, _), _ = jax.lax.scan(cell, (zeros, zeros), jnp.swapaxes(x, 0, 1))
    return h


def gru_init(jax, key, n_in, units):
    """Keras 3's GRU (reset_after=True): gates z, r, h; an input and a
    recurrent bias."""
    keys = jax.random.split(key, 2)
    return {
        "w": jax.nn.initializers.glorot_uniform()(keys[0], (n_in, 3 * units)),
        "u": jax.nn.initializers.orthogonal()(keys[1], (units, 3 * units)),
        "b": jax.numpy.zeros((2, 3 * units)),
    }


def gru(jax, layer, x):
    """The last output of a GRU over (batch, time, features), the reset gate
    applied after the recurrent matrix product (reset_after, cuDNN's GRU)."""
    jnp, sigmoid = jax.numpy, jax.nn.sigmoid

    def cell(h, x_t):
        x_z, x_r, x_h = jnp.split(x_t @ layer["w"] + layer["b"][0], 3, axis=-1)
        h_z, h_r, h_h = jnp.split(h @ layer["u"] + layer["b"][1], 3, axis=-1)
        z = sigmoid(x_z + h_z)
        candidate = jnp.tanh(x_h + sigmoid(x_r + h_r) * h_h)
        return z * h + (1.0 - z) * candidate, None

    zeros = jnp.zeros((x.shape[0], layer["u"].shape[0]), x.dtype)
    h, _ = jax.lax.scan(cell, zeros, jnp.swapaxes(x, 0, 1))
    return h


def batch_norm_init(jax, channels):
    """Scale, offset and the moving statistics (Keras counts all four)."""
    jnp = jax.numpy
    zeros, ones = jnp.zeros((channels,)), jnp.ones((channels,))
    return {"gamma": ones, "beta": zeros, "mean": zeros, "var": ones}


def batch_norm(jax, layer, x):
    """Inference: the moving statistics, Keras' ResNet epsilon 1.001e-5,
    folded into one scale and offset as Keras' batch_normalization op."""
    scale = layer["gamma"] * jax.lax.rsqrt(layer["var"] + 1.001e-5)
    return x * scale + (layer["beta"] - layer["mean"] * scale)


def bottleneck_init(jax, key, n_in, filters, shortcut):
    """Keras' ResNet block1: 1x1, 3x3, 1x1 (x4) convolutions with biases,
    each followed by batch norm; a projection shortcut in a stage's first."""
    keys = jax.random.split(key, 4)
    # In Keras' order of weights (the shortcut's after the 3x3), which the
    # shared initial weights follow.
    block = {"conv1": conv(jax, keys[0], 1, n_in, filters), "bn1": batch_norm_init(jax, filters)}
    block["conv2"] = conv(jax, keys[1], 3, filters, filters)
    block["bn2"] = batch_norm_init(jax, filters)
    if shortcut:
        block["shortcut"] = conv(jax, keys[3], 1, n_in, 4 * filters)
        block["shortcut_bn"] = batch_norm_init(jax, 4 * filters)
    block["conv3"] = conv(jax, keys[2], 1, filters, 4 * filters)
    block["bn3"] = batch_norm_init(jax, 4 * filters)
    return block


def bottleneck(jax, block, x, stride):
    relu = jax.nn.relu
    shortcut = x
    if "shortcut" in block:
        shortcut = batch_norm(
            jax, block["shortcut_bn"], convolve(jax, block["shortcut"], x, "VALID", stride)
        )
    x = relu(batch_norm(jax, block["bn1"], convolve(jax, block["conv1"], x, "VALID", stride)))
    x = relu(batch_norm(jax, block["bn2"], convolve(jax, block["conv2"], x, "SAME")))
    x = batch_norm(jax, block["bn3"], convolve(jax, block["conv3"], x))
    return relu(shortcut + x)


# Keras' optimizer settings -> optax (names: native.optimizer_arguments).
# Checked against Keras 3.15's update steps:
# - RMSprop: Keras 3 adds epsilon inside the square root,
#   lr * g / sqrt(v + eps) (Keras 2 added it outside): optax.rmsprop with
#   eps_in_sqrt=True is the same rule, centered and momentum included.
# - Adadelta: the same rule (sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps)).
# - Adam: Keras folds the bias corrections into the step size and adds
#   epsilon to the uncorrected sqrt(v) ("epsilon hat"); optax adds it to the
#   bias-corrected sqrt(v_hat), i.e. Keras' epsilon is optax's epsilon times
#   sqrt(1 - beta_2^t): a difference only while v is of epsilon's size.
# - SGD: optax accumulates momentum on the gradient and scales by the
#   learning rate afterwards; Keras accumulates lr * g. Equal for a constant
#   learning rate; with a decaying one Keras' older velocity keeps its lr.
OPTIMIZERS = {
    "rmsprop": (
        "rmsprop",
        {"rho": "decay", "epsilon": "eps", "momentum": None, "centered": "centered"},
    ),
    "adadelta": ("adadelta", {"rho": "rho", "epsilon": "eps"}),
    "adam": ("adam", {"beta_1": "b1", "beta_2": "b2", "epsilon": "eps"}),
    "sgd": ("sgd", {"momentum": None, "nesterov": "nesterov"}),
}
OPTIMIZER_NOTES = {
    "rmsprop": "optax.rmsprop(eps_in_sqrt=True): Keras 3's rule",
    "adadelta": "optax.adadelta: Keras 3's rule",
    "adam": "optax.adam: epsilon added to the bias-corrected sqrt(v) (Keras: to the uncorrected)",
    "sgd": "optax.sgd: momentum on gradients, lr applied after (Keras: on lr * g)",
}
# Whose rule is not Keras 3's (the record's settings.own_rules).
OWN_RULES = {"adam", "sgd"}


def optimizer(optax, native, settings):
    """The optax optimizer for the config's Keras ``settings``; Keras 2's
    ``decay`` as the inverse-time schedule of native.learning_rate."""
    name, renames = OPTIMIZERS[settings["name"]]
    kwargs = native.optimizer_arguments(settings, renames)
    if settings.get("momentum"):  # None, not 0: no momentum trace
        kwargs["momentum"] = settings["momentum"]
    if name == "rmsprop":
        kwargs["eps_in_sqrt"] = True
    rate = settings["learning_rate"]
    if settings.get("decay"):
        rate = lambda step: native.learning_rate(settings, step)  # noqa: E731
    return getattr(optax, name)(rate, **kwargs)


def loss_scaled(jax, inner, initial=LOSS_SCALE_INITIAL, growth_interval=LOSS_SCALE_GROWTH_INTERVAL):
    """``inner`` (an optax optimizer) with dynamic loss scaling as Keras'
    LossScaleOptimizer and jmp's DynamicLossScale do it: the train step
    multiplies the loss by ``scale(state)`` (2^15 at first); ``update``
    divides the gradients by it, skips a step whose gradients are not all
    finite (no update, the optimizer's state kept) and halves the scale, and
    doubles it after ``growth_interval`` finite steps in a row."""
    import jax.numpy as jnp

    tree_map = jax.tree_util.tree_map

    class LossScaled(object):
        @staticmethod
        def init(params):
            return inner.init(params), jnp.float32(initial), jnp.int32(0)

        @staticmethod
        def scale(state):
            return state[1]

        @staticmethod
        def update(scaled_grads, state, params):
            inner_state, scale, finite_steps = state
            grads = tree_map(lambda g: g / scale, scaled_grads)
            leaves = jax.tree_util.tree_leaves(grads)
            finite = jnp.all(jnp.stack([jnp.all(jnp.isfinite(g)) for g in leaves]))
            updates, stepped = inner.update(grads, inner_state, params)
            updates = tree_map(lambda u: jnp.where(finite, u, jnp.zeros_like(u)), updates)
            kept = tree_map(lambda new, old: jnp.where(finite, new, old), stepped, inner_state)
            grow = finite & (finite_steps + 1 >= growth_interval)
            scale = jnp.where(grow, scale * 2.0, scale)
            scale = jnp.where(finite, scale, jnp.maximum(scale / 2.0, 1.0))
            finite_steps = jnp.where(finite & ~grow, finite_steps + 1, 0)
            return updates, (kept, scale, finite_steps)

    return LossScaled()
