"""The workloads in plain JAX, layer for layer as the Keras definitions
(keras_models.py): parameters are pytrees of arrays (dicts and lists), a
model is its parameters and a pure ``forward(params, x, key=None)`` that
returns logits; ``key`` is the step's PRNG key for dropout (None: inference,
no dropout). Same layers, parameter counts and initial weight distributions
as Keras: Glorot-uniform kernels (dense, convolution, recurrent inputs),
orthogonal recurrent kernels, zero biases (LSTM forget gate 1), embeddings
uniform in +-0.05, batch norm with Keras' epsilon and moving statistics.
Images are channels-last, as Keras and the prepared data have them.
Importable without jax until a model is built."""


def _keys(jax, key, count):
    """``count`` keys from ``key``; ``count`` Nones without one."""
    return [None] * count if key is None else list(jax.random.split(key, count))


def _dense(jax, key, n_in, n_out):
    kernel = jax.nn.initializers.glorot_uniform()(key, (n_in, n_out))
    return {"w": kernel, "b": jax.numpy.zeros((n_out,))}


def _conv(jax, key, size, n_in, n_out):
    """An HWIO kernel: Glorot over the receptive field, as Keras' Conv2D."""
    kernel = jax.nn.initializers.glorot_uniform()(key, (size, size, n_in, n_out))
    return {"w": kernel, "b": jax.numpy.zeros((n_out,))}


def _linear(layer, x):
    return x @ layer["w"] + layer["b"]


def _convolve(jax, layer, x, padding="VALID", stride=1):
    y = jax.lax.conv_general_dilated(
        x, layer["w"], (stride, stride), padding, dimension_numbers=("NHWC", "HWIO", "NHWC")
    )
    return y + layer["b"]


def _max_pool(jax, x, size=2, stride=2):
    window, strides = (1, size, size, 1), (1, stride, stride, 1)
    return jax.lax.reduce_window(x, -jax.numpy.inf, jax.lax.max, window, strides, "VALID")


def _dropout(jax, key, x, rate):
    """Inverted dropout as Keras': kept units scaled by 1 / (1 - rate)."""
    if key is None:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jax.numpy.where(keep, x / (1.0 - rate), 0.0)


def _flatten(x):
    return x.reshape((x.shape[0], -1))


def mlp(jax, spec, key):
    height, width, channels = spec["input_shape"]
    keys = jax.random.split(key, 3)
    params = [
        _dense(jax, keys[0], height * width * channels, 512),
        _dense(jax, keys[1], 512, 512),
        _dense(jax, keys[2], 512, spec["classes"]),
    ]

    def forward(params, x, key=None):
        drop = _keys(jax, key, 2)
        x = _dropout(jax, drop[0], jax.nn.relu(_linear(params[0], _flatten(x))), 0.2)
        x = _dropout(jax, drop[1], jax.nn.relu(_linear(params[1], x)), 0.2)
        return _linear(params[2], x)

    return params, forward


def cnn(jax, spec, key):
    height, width, channels = spec["input_shape"]
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    keys = jax.random.split(key, 4)
    params = [
        _conv(jax, keys[0], 3, channels, 32),
        _conv(jax, keys[1], 3, 32, 64),
        _dense(jax, keys[2], flat, 128),
        _dense(jax, keys[3], 128, spec["classes"]),
    ]

    def forward(params, x, key=None):
        drop = _keys(jax, key, 2)
        x = jax.nn.relu(_convolve(jax, params[0], x))
        x = _max_pool(jax, jax.nn.relu(_convolve(jax, params[1], x)))
        x = _flatten(_dropout(jax, drop[0], x, 0.25))
        x = _dropout(jax, drop[1], jax.nn.relu(_linear(params[2], x)), 0.5)
        return _linear(params[3], x)

    return params, forward


def lenet(jax, spec, key):
    """No activation on the convolutions, as in Caffe's LeNet."""
    height, width, channels = spec["input_shape"]
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    keys = jax.random.split(key, 4)
    params = [
        _conv(jax, keys[0], 5, channels, 20),
        _conv(jax, keys[1], 5, 20, 50),
        _dense(jax, keys[2], flat, 500),
        _dense(jax, keys[3], 500, spec["classes"]),
    ]

    def forward(params, x, key=None):
        x = _max_pool(jax, _convolve(jax, params[0], x))
        x = _max_pool(jax, _convolve(jax, params[1], x))
        x = jax.nn.relu(_linear(params[2], _flatten(x)))
        return _linear(params[3], x)

    return params, forward


def _embedding(jax, key, vocabulary, width):
    """Keras' Embedding: uniform in +-0.05."""
    return jax.random.uniform(key, (vocabulary, width), minval=-0.05, maxval=0.05)


def _lstm_init(jax, key, n_in, units):
    """Keras' LSTM: gates i, f, c, o side by side; forget-gate bias 1."""
    keys = jax.random.split(key, 2)
    return {
        "w": jax.nn.initializers.glorot_uniform()(keys[0], (n_in, 4 * units)),
        "u": jax.nn.initializers.orthogonal()(keys[1], (units, 4 * units)),
        "b": jax.numpy.zeros((4 * units,)).at[units : 2 * units].set(1.0),
    }


def _lstm(jax, layer, x):
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


def _gru_init(jax, key, n_in, units):
    """Keras 3's GRU (reset_after=True): gates z, r, h; an input and a
    recurrent bias."""
    keys = jax.random.split(key, 2)
    return {
        "w": jax.nn.initializers.glorot_uniform()(keys[0], (n_in, 3 * units)),
        "u": jax.nn.initializers.orthogonal()(keys[1], (units, 3 * units)),
        "b": jax.numpy.zeros((2, 3 * units)),
    }


def _gru(jax, layer, x):
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


def hrnn(jax, spec, key):
    """Hierarchical RNN: an LSTM over the pixels of each row (Keras'
    TimeDistributed), a second LSTM over the row encodings."""
    height, width, channels = spec["input_shape"]
    keys = jax.random.split(key, 3)
    params = [
        _lstm_init(jax, keys[0], channels, 128),
        _lstm_init(jax, keys[1], 128, 128),
        _dense(jax, keys[2], 128, spec["classes"]),
    ]

    def forward(params, x, key=None):
        rows = _lstm(jax, params[0], x.reshape((-1, width, channels)))
        encoded = _lstm(jax, params[1], rows.reshape((x.shape[0], height, -1)))
        return _linear(params[2], encoded)

    return params, forward


def cifar_cnn(jax, spec, key):
    height, width, channels = spec["input_shape"]
    flat = 64 * (((height - 2) // 2 - 2) // 2) * (((width - 2) // 2 - 2) // 2)
    keys = jax.random.split(key, 6)
    params = [
        _conv(jax, keys[0], 3, channels, 32),
        _conv(jax, keys[1], 3, 32, 32),
        _conv(jax, keys[2], 3, 32, 64),
        _conv(jax, keys[3], 3, 64, 64),
        _dense(jax, keys[4], flat, 512),
        _dense(jax, keys[5], 512, spec["classes"]),
    ]

    def forward(params, x, key=None):
        drop = _keys(jax, key, 3)
        x = jax.nn.relu(_convolve(jax, params[0], x, "SAME"))
        x = _max_pool(jax, jax.nn.relu(_convolve(jax, params[1], x)))
        x = jax.nn.relu(_convolve(jax, params[2], _dropout(jax, drop[0], x, 0.25), "SAME"))
        x = _max_pool(jax, jax.nn.relu(_convolve(jax, params[3], x)))
        x = _flatten(_dropout(jax, drop[1], x, 0.25))
        x = _dropout(jax, drop[2], jax.nn.relu(_linear(params[4], x)), 0.5)
        return _linear(params[5], x)

    return params, forward


def vgg_cifar(jax, spec, key):
    """The VGG-style CNN of the DeepLearningFrameworks comparison."""
    height, width, channels = spec["input_shape"]
    flat = 100 * (height // 4) * (width // 4)
    keys = jax.random.split(key, 6)
    params = [
        _conv(jax, keys[0], 3, channels, 50),
        _conv(jax, keys[1], 3, 50, 50),
        _conv(jax, keys[2], 3, 50, 100),
        _conv(jax, keys[3], 3, 100, 100),
        _dense(jax, keys[4], flat, 512),
        _dense(jax, keys[5], 512, spec["classes"]),
    ]

    def forward(params, x, key=None):
        drop = _keys(jax, key, 3)
        x = jax.nn.relu(_convolve(jax, params[0], x, "SAME"))
        x = _max_pool(jax, jax.nn.relu(_convolve(jax, params[1], x, "SAME")))
        x = jax.nn.relu(_convolve(jax, params[2], _dropout(jax, drop[0], x, 0.25), "SAME"))
        x = _max_pool(jax, jax.nn.relu(_convolve(jax, params[3], x, "SAME")))
        x = _flatten(_dropout(jax, drop[1], x, 0.25))
        x = _dropout(jax, drop[2], jax.nn.relu(_linear(params[4], x)), 0.5)
        return _linear(params[5], x)

    return params, forward


def imdb_gru(jax, spec, key):
    keys = jax.random.split(key, 3)
    params = [
        _embedding(jax, keys[0], spec["vocabulary"], 125),
        _gru_init(jax, keys[1], 125, 100),
        _dense(jax, keys[2], 100, spec["classes"]),
    ]

    def forward(params, x, key=None):
        return _linear(params[2], _gru(jax, params[1], params[0][x]))

    return params, forward


def babi_rnn(jax, spec, key):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    vocabulary = spec["vocabulary"]
    keys = jax.random.split(key, 5)
    params = {
        "story": [_embedding(jax, keys[0], vocabulary, 50), _lstm_init(jax, keys[1], 50, 100)],
        "question": [_embedding(jax, keys[2], vocabulary, 50), _lstm_init(jax, keys[3], 50, 100)],
        "answer": _dense(jax, keys[4], 200, spec["classes"]),
    }

    def forward(params, x, key=None):
        encoded = [
            _lstm(jax, params[name][1], params[name][0][x[name]]) for name in ("story", "question")
        ]
        return _linear(params["answer"], jax.numpy.concatenate(encoded, axis=-1))

    return params, forward


def _batch_norm_init(jax, channels):
    """Scale, offset and the moving statistics (Keras counts all four)."""
    jnp = jax.numpy
    zeros, ones = jnp.zeros((channels,)), jnp.ones((channels,))
    return {"gamma": ones, "beta": zeros, "mean": zeros, "var": ones}


def _batch_norm(jax, layer, x):
    """Inference: the moving statistics, Keras' ResNet epsilon 1.001e-5,
    folded into one scale and offset as Keras' batch_normalization op."""
    scale = layer["gamma"] * jax.lax.rsqrt(layer["var"] + 1.001e-5)
    return x * scale + (layer["beta"] - layer["mean"] * scale)


def _bottleneck_init(jax, key, n_in, filters, shortcut):
    """Keras' ResNet block1: 1x1, 3x3, 1x1 (x4) convolutions with biases,
    each followed by batch norm; a projection shortcut in a stage's first."""
    keys = jax.random.split(key, 4)
    block = {
        "conv1": _conv(jax, keys[0], 1, n_in, filters),
        "conv2": _conv(jax, keys[1], 3, filters, filters),
        "conv3": _conv(jax, keys[2], 1, filters, 4 * filters),
    }
    for name, channels in (("bn1", filters), ("bn2", filters), ("bn3", 4 * filters)):
        block[name] = _batch_norm_init(jax, channels)
    if shortcut:
        block["shortcut"] = _conv(jax, keys[3], 1, n_in, 4 * filters)
        block["shortcut_bn"] = _batch_norm_init(jax, 4 * filters)
    return block


def _bottleneck(jax, block, x, stride):
    relu = jax.nn.relu
    shortcut = x
    if "shortcut" in block:
        shortcut = _batch_norm(
            jax, block["shortcut_bn"], _convolve(jax, block["shortcut"], x, "VALID", stride)
        )
    x = relu(_batch_norm(jax, block["bn1"], _convolve(jax, block["conv1"], x, "VALID", stride)))
    x = relu(_batch_norm(jax, block["bn2"], _convolve(jax, block["conv2"], x, "SAME")))
    x = _batch_norm(jax, block["bn3"], _convolve(jax, block["conv3"], x))
    return relu(shortcut + x)


def resnet50(jax, spec, key):
    """ResNet-50 as keras.applications.ResNet50(include_top=False,
    pooling="avg"): 2048 features. Inference only: batch norm uses its
    moving statistics. Random weights: they do not change the speed."""
    height, width, channels = spec["input_shape"]
    stages = ((64, 3), (128, 4), (256, 6), (512, 3))
    keys = iter(jax.random.split(key, 1 + sum(blocks for _, blocks in stages)))
    params = {"conv1": _conv(jax, next(keys), 7, channels, 64), "bn1": _batch_norm_init(jax, 64)}
    params["stages"], n_in = [], 64
    for filters, blocks in stages:
        stage = []
        for index in range(blocks):
            stage.append(_bottleneck_init(jax, next(keys), n_in, filters, index == 0))
            n_in = 4 * filters
        params["stages"].append(stage)

    def forward(params, x, key=None):
        jnp = jax.numpy
        x = _convolve(jax, params["conv1"], x, ((3, 3), (3, 3)), 2)  # ZeroPadding2D(3)
        x = jax.nn.relu(_batch_norm(jax, params["bn1"], x))
        x = _max_pool(jax, jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))), 3, 2)
        for number, stage in enumerate(params["stages"]):
            for index, block in enumerate(stage):
                x = _bottleneck(jax, block, x, 2 if number and not index else 1)
        return x.mean(axis=(1, 2))

    return params, forward


# The last layer gives logits: the loss is optax's softmax cross-entropy on
# them (one fused, stable op) and predict applies the softmax, as Keras'
# output layer (catalog.ends_in_features: none for models that end in features).
BUILDERS = {
    "mlp": mlp,
    "cnn": cnn,
    "hrnn": hrnn,
    "cifar_cnn": cifar_cnn,
    "vgg_cifar": vgg_cifar,
    "imdb_gru": imdb_gru,
    "babi_rnn": babi_rnn,
    "resnet50": resnet50,
    "lenet": lenet,
}


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
