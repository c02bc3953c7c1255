"""The workloads in TensorFlow's own API (tf.Module, tf.Variable, tf.nn), no
Keras, layer for layer as the Keras definitions (in_keras.py): same layers,
parameter counts and initial weight distributions (Glorot-uniform kernels,
orthogonal recurrent kernels, LSTM forget-gate bias 1, Embedding uniform
+-0.05, zero biases, as Keras' defaults).

A model is a ``tf.Module`` that holds its variables and has ``forward(x,
training)``, the logits (resnet50: its pooled features); ``output`` turns them
into what Keras' model outputs (softmax probabilities). Layers are closures
over their variables, built in Keras' order; they read them through ``read``,
in the model's ``compute_dtype`` (float32 unless the run asks for mixed
precision: ``in_precision``). Importable without TensorFlow
until a model is built; ``tf`` is the module the adapter imported.
"""

from dlbench.models.layers import LOSS_SCALE_GROWTH_INTERVAL, LOSS_SCALE_INITIAL, dropout_on


def new_model(tf, name, output="softmax"):
    model = tf.Module(name=name)
    model.weights = []  # tracked by tf.Module: model.variables are the layers'
    model.output = tf.nn.softmax if output == "softmax" else tf.identity
    model.compute_dtype = None  # the variables' own (float32)
    return model


def read(tf, model, variable):
    """A variable as the layers compute with it: cast to the model's compute
    dtype under mixed precision (its gradient comes back float32 through the
    cast), itself otherwise."""
    return variable if model.compute_dtype is None else tf.cast(variable, model.compute_dtype)


def in_precision(tf, model, dtype):
    """Mixed precision as Keras' policies and jmp do it: float32 variables,
    each cast to ``dtype`` where a layer uses it, floating inputs cast too,
    the forward pass's outputs back to float32 (loss and softmax in float32).
    ``model.computed_dtype`` is the dtype the layers' last output had when the
    forward pass was traced."""
    model.compute_dtype = dtype
    forward = model.forward

    def forward_in_precision(x, training):
        if x.dtype.is_floating:
            x = tf.cast(x, dtype)
        outputs = forward(x, training)
        model.computed_dtype = outputs.dtype.name
        return tf.cast(outputs, tf.float32)

    model.forward = forward_in_precision
    return model


def add_variable(tf, model, initial, trainable=True):
    model.weights.append(tf.Variable(initial, trainable=trainable))
    return model.weights[-1]


def load_keras_weights(model, layout, weights):
    """Assign the shared initial weights (dlbench.models.initial_weights, Keras'
    axes, which are this family's: channels-last, the same gates and
    biases) to ``model.weights``. Each variable takes the next Keras weight
    of its shape: the order of creation here and Keras' graph order differ
    only between layers of different shapes (babi_rnn builds story, then
    question; Keras lists both embeddings first). Every shape is matched
    before anything is assigned."""
    from dlbench.models import initial_weights as shared

    normalised = {entry["class"] for entry in layout["weights"]} & {"BatchNormalization"}
    if normalised:  # measured on resnet50: loaded by shape, its outputs were 7.0 off Keras'
        raise ValueError(
            "matching by shape cannot tell a BatchNormalization's four vectors (gamma, beta, "
            "moving mean and variance: one shape) apart"
        )
    keras = [(tuple(entry["shape"]), values) for entry, values in zip(layout["weights"], weights)]
    shapes = [tuple(variable.shape.as_list()) for variable in model.weights]
    for variable, values in zip(model.weights, shared.assign_by_shape(shapes, keras, "TensorFlow")):
        variable.assign(values)


def glorot(tf, shape):
    """Keras' GlorotUniform: fans over the receptive field of a kernel."""
    receptive = 1
    for size in shape[:-2]:
        receptive *= size
    limit = (6.0 / ((shape[-2] + shape[-1]) * receptive)) ** 0.5
    return tf.random.uniform(shape, -limit, limit)


def orthogonal(tf, rows, columns):
    """Keras' Orthogonal: Q of a normal matrix's QR, signs from R's diagonal."""
    q, r = tf.linalg.qr(tf.random.normal([max(rows, columns), min(rows, columns)]))
    q *= tf.sign(tf.linalg.diag_part(r))
    return q if rows >= columns else tf.transpose(q)


def sequential(model, layers):
    def forward(x, training):
        for layer in layers:
            x = layer(x, training)
        return x

    model.forward = forward
    return model


def dense_layer(tf, model, fan_in, units, activation=None):
    kernel = add_variable(tf, model, glorot(tf, [fan_in, units]))
    bias = add_variable(tf, model, tf.zeros([units]))

    def dense(x, training):
        y = tf.nn.bias_add(tf.matmul(x, read(tf, model, kernel)), read(tf, model, bias))
        return activation(y) if activation else y

    return dense


def conv_layer(tf, model, size, channels, filters, activation=None, padding="VALID", stride=1):
    kernel = add_variable(tf, model, glorot(tf, [size, size, channels, filters]))
    bias = add_variable(tf, model, tf.zeros([filters]))

    def conv(x, training):
        y = tf.nn.conv2d(x, read(tf, model, kernel), stride, padding)
        y = tf.nn.bias_add(y, read(tf, model, bias))
        return activation(y) if activation else y

    return conv


def max_pool(tf, size=2):
    return lambda x, training: tf.nn.max_pool2d(x, size, size, "VALID")


def dropout(tf, rate):
    def layer(x, training):
        return tf.nn.dropout(x, rate) if training and dropout_on() else x

    return layer


def flatten(tf):
    return lambda x, training: tf.reshape(x, [tf.shape(x)[0], -1])


def flat_size(shape):
    total = 1
    for size in shape:
        total *= size
    return total


def embedding(tf, model, vocabulary, dimension):
    table = add_variable(tf, model, tf.random.uniform([vocabulary, dimension], -0.05, 0.05))
    return lambda x, training: tf.nn.embedding_lookup(read(tf, model, table), x)


RECURRENT = "Keras' cell in a tf.foldl loop, input projections of all steps at once (no cuDNN)"


def recurrent_loop(tf, x, kernel, bias, cell, initial):
    """The input projections of every step at once (time-major), then
    ``cell`` over the steps in a tf.foldl loop: the last state."""
    inputs = tf.nn.bias_add(tf.einsum("btf,fg->tbg", x, kernel), bias)
    return tf.foldl(cell, inputs, initializer=initial)


def lstm_layer(tf, model, fan_in, units):
    """Keras' LSTM: gates i, f, c, o; sigmoid and tanh; forget-gate bias 1."""
    model.recurrent = RECURRENT
    kernel = add_variable(tf, model, glorot(tf, [fan_in, 4 * units]))
    recurrent = add_variable(tf, model, orthogonal(tf, units, 4 * units))
    bias = add_variable(
        tf, model, tf.concat([tf.zeros([units]), tf.ones([units]), tf.zeros([2 * units])], 0)
    )

    def cell(state, projected):
        h, c = state
        i, f, g, o = tf.split(projected + tf.matmul(h, read(tf, model, recurrent)), 4, axis=1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        return tf.sigmoid(o) * tf.tanh(c), c

    def lstm(x, training):
        zeros = tf.zeros([tf.shape(x)[0], units], dtype=x.dtype)
        weights = read(tf, model, kernel), read(tf, model, bias)
        return recurrent_loop(tf, x, *weights, cell, (zeros, zeros))[0]

    return lstm


def gru_layer(tf, model, fan_in, units):
    """Keras 3's GRU: gates z, r, h; reset after the recurrent product, with
    an input and a recurrent bias."""
    model.recurrent = RECURRENT
    kernel = add_variable(tf, model, glorot(tf, [fan_in, 3 * units]))
    recurrent = add_variable(tf, model, orthogonal(tf, units, 3 * units))
    bias = add_variable(tf, model, tf.zeros([2, 3 * units]))

    def cell(h, projected):
        x_z, x_r, x_h = tf.split(projected, 3, axis=1)
        projected_h = tf.matmul(h, read(tf, model, recurrent)) + read(tf, model, bias)[1]
        h_z, h_r, h_h = tf.split(projected_h, 3, axis=1)
        z = tf.sigmoid(x_z + h_z)
        candidate = tf.tanh(x_h + tf.sigmoid(x_r + h_r) * h_h)
        return z * h + (1.0 - z) * candidate

    def gru(x, training):
        zeros = tf.zeros([tf.shape(x)[0], units], dtype=x.dtype)
        return recurrent_loop(tf, x, read(tf, model, kernel), read(tf, model, bias)[0], cell, zeros)

    return gru


def over_rows(tf, layer):
    """Keras' TimeDistributed over the rows of an image (N, H, W, C): the
    layer on each row, a sequence of W steps of C features."""

    def rows(x, training):
        shape = tf.shape(x)
        encoded = layer(tf.reshape(x, [-1, shape[2], shape[3]]), training)
        return tf.reshape(encoded, [shape[0], shape[1], encoded.shape[-1]])

    return rows


def batch_norm(tf, model, channels):
    """Keras' BatchNormalization at inference: moving statistics (counted as
    parameters, not trained), epsilon 1.001e-5 as Keras' ResNet."""
    gamma = add_variable(tf, model, tf.ones([channels]))
    beta = add_variable(tf, model, tf.zeros([channels]))
    mean = add_variable(tf, model, tf.zeros([channels]), trainable=False)
    variance = add_variable(tf, model, tf.ones([channels]), trainable=False)

    def norm(x):
        mean_, variance_, beta_, gamma_ = (
            read(tf, model, v) for v in (mean, variance, beta, gamma)
        )
        return tf.nn.batch_normalization(x, mean_, variance_, beta_, gamma_, 1.001e-5)

    return norm


def conv_bn(tf, model, size, channels, filters, stride=1, padding="VALID"):
    conv = conv_layer(tf, model, size, channels, filters, padding=padding, stride=stride)
    norm = batch_norm(tf, model, filters)
    return lambda x: norm(conv(x, False))


def bottleneck(tf, model, channels, filters, stride):
    """Keras' ResNet50 block1: 1x1 (strided), 3x3, 1x1 x 4; a projection
    shortcut where the shape changes."""
    shortcut = None
    if stride != 1 or channels != 4 * filters:
        shortcut = conv_bn(tf, model, 1, channels, 4 * filters, stride)
    reduce = conv_bn(tf, model, 1, channels, filters, stride)
    middle = conv_bn(tf, model, 3, filters, filters, padding="SAME")
    expand = conv_bn(tf, model, 1, filters, 4 * filters)

    def block(x):
        y = expand(tf.nn.relu(middle(tf.nn.relu(reduce(x)))))
        return tf.nn.relu((shortcut(x) if shortcut else x) + y)

    return block


# Keras' optimizer settings -> TensorFlow's fused training kernels
# (tf.raw_ops.ResourceApply*: the kernels of tf.compat.v1.train's optimizers,
# which XLA compiles), each with Keras 3's update rule (RMSprop's epsilon
# inside the square root, Adam's bias correction folded into the learning
# rate, SGD's velocity = momentum x velocity - lr x gradient): the kernel, its
# slot variables, Keras' name -> the kernel's argument.
OPTIMIZERS = {
    "rmsprop": (
        "ResourceApplyRMSProp",
        ("ms", "mom"),
        {"rho": "rho", "momentum": "momentum", "epsilon": "epsilon", "centered": None},
    ),
    "adadelta": (
        "ResourceApplyAdadelta",
        ("accum", "accum_update"),
        {"rho": "rho", "epsilon": "epsilon"},
    ),
    "adam": (
        "ResourceApplyAdam",
        ("m", "v"),
        {"beta_1": "beta1", "beta_2": "beta2", "epsilon": "epsilon"},
    ),
    "sgd": (
        "ResourceApplyKerasMomentum",
        ("accum",),
        {"momentum": "momentum", "nesterov": "use_nesterov"},
    ),
}
CENTERED_RMSPROP = ("ResourceApplyCenteredRMSProp", ("mg", "ms", "mom"))


def optimizer(tf, variables, settings, native):
    """The optimizer of the config's ``settings`` over ``variables``: zero
    slot variables and the step count (Keras' ``iterations``) in a tf.Module;
    ``apply(gradients)`` runs one update, with Keras 2's ``decay`` as
    inverse-time decay of the learning rate per step. ``native``: the native
    adapters' optimizer helpers (dlbench.run.backends.native), handed in as
    every family's optimizer mapping takes them."""
    kernel, slots, renames = OPTIMIZERS[settings["name"]]
    if settings.get("centered"):
        kernel, slots = CENTERED_RMSPROP
    arguments = native.optimizer_arguments(settings, renames)
    state = tf.Module(name=settings["name"])
    state.slots = [
        {name: tf.Variable(tf.zeros(v.shape), trainable=False) for name in slots} for v in variables
    ]
    state.step = tf.Variable(
        0.0, trainable=False, aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA
    )

    def apply(gradients):
        given = dict(arguments, lr=native.learning_rate(settings, state.step))
        if kernel == "ResourceApplyAdam":  # bias corrections of step t = step + 1
            given.update(
                beta1_power=given["beta1"] ** (state.step + 1),
                beta2_power=given["beta2"] ** (state.step + 1),
            )
        for variable, slot, gradient in zip(variables, state.slots, gradients):
            handles = {name: value.handle for name, value in slot.items()}
            getattr(tf.raw_ops, kernel)(
                var=variable.handle, grad=gradient, **dict(given, **handles)
            )
        state.step.assign_add(1.0)

    state.apply = apply
    return state


class LossScale(object):
    """Dynamic loss scaling as Keras' LossScaleOptimizer does it: the loss
    multiplied by ``scale`` (2^15 at first), the gradients divided by it; a
    step whose gradients are not all finite is skipped and halves the scale,
    2,000 finite steps in a row double it."""

    def __init__(self, tf, initial=LOSS_SCALE_INITIAL, growth_interval=LOSS_SCALE_GROWTH_INTERVAL):
        self.tf = tf
        self.growth_interval = growth_interval
        first = tf.VariableAggregation.ONLY_FIRST_REPLICA
        self.scale = tf.Variable(initial, trainable=False, aggregation=first)
        self.finite_steps = tf.Variable(0, trainable=False, aggregation=first)

    def apply(self, update, scaled_gradients):
        """``update`` of the unscaled gradients, where they are all finite."""
        tf = self.tf
        gradients = [gradient / self.scale for gradient in scaled_gradients]
        finite = tf.reduce_all([tf.reduce_all(tf.math.is_finite(g)) for g in gradients])

        def step():
            update(gradients)
            grow = self.finite_steps + 1 >= self.growth_interval
            self.scale.assign(tf.where(grow, self.scale * 2.0, self.scale))
            self.finite_steps.assign(tf.where(grow, 0, self.finite_steps + 1))
            return tf.constant(True)

        def skip():
            self.scale.assign(tf.maximum(self.scale / 2.0, 1.0))
            self.finite_steps.assign(0)
            return tf.constant(False)

        return tf.cond(finite, step, skip)
