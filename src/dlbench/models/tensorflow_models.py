"""The workloads in TensorFlow's own API (tf.Module, tf.Variable, tf.nn), no
Keras, layer for layer as the Keras definitions (keras_models.py): same
layers, parameter counts and initial weight distributions (Glorot-uniform
kernels, orthogonal recurrent kernels, LSTM forget-gate bias 1, Embedding
uniform +-0.05, zero biases, as Keras' defaults).

A model is a ``tf.Module`` that holds its variables and has ``forward(x,
training)``, the logits (resnet50: its pooled features); ``output`` turns them
into what Keras' model outputs (softmax probabilities). Layers are closures
over their variables, built in Keras' order. Importable without TensorFlow
until a model is built; ``tf`` is the module the adapter imported.
"""

from dlbench.backends import native


def _model(tf, name, output="softmax"):
    model = tf.Module(name=name)
    model.weights = []  # tracked by tf.Module: model.variables are the layers'
    model.output = tf.nn.softmax if output == "softmax" else tf.identity
    return model


def _variable(tf, model, initial, trainable=True):
    model.weights.append(tf.Variable(initial, trainable=trainable))
    return model.weights[-1]


def _glorot(tf, shape):
    """Keras' GlorotUniform: fans over the receptive field of a kernel."""
    receptive = 1
    for size in shape[:-2]:
        receptive *= size
    limit = (6.0 / ((shape[-2] + shape[-1]) * receptive)) ** 0.5
    return tf.random.uniform(shape, -limit, limit)


def _orthogonal(tf, rows, columns):
    """Keras' Orthogonal: Q of a normal matrix's QR, signs from R's diagonal."""
    q, r = tf.linalg.qr(tf.random.normal([max(rows, columns), min(rows, columns)]))
    q *= tf.sign(tf.linalg.diag_part(r))
    return q if rows >= columns else tf.transpose(q)


def _sequential(model, layers):
    def forward(x, training):
        for layer in layers:
            x = layer(x, training)
        return x

    model.forward = forward
    return model


def _dense(tf, model, fan_in, units, activation=None):
    kernel = _variable(tf, model, _glorot(tf, [fan_in, units]))
    bias = _variable(tf, model, tf.zeros([units]))

    def dense(x, training):
        y = tf.nn.bias_add(tf.matmul(x, kernel), bias)
        return activation(y) if activation else y

    return dense


def _conv(tf, model, size, channels, filters, activation=None, padding="VALID", stride=1):
    kernel = _variable(tf, model, _glorot(tf, [size, size, channels, filters]))
    bias = _variable(tf, model, tf.zeros([filters]))

    def conv(x, training):
        y = tf.nn.bias_add(tf.nn.conv2d(x, kernel, stride, padding), bias)
        return activation(y) if activation else y

    return conv


def _max_pool(tf, size=2):
    return lambda x, training: tf.nn.max_pool2d(x, size, size, "VALID")


def _dropout(tf, rate):
    return lambda x, training: tf.nn.dropout(x, rate) if training else x


def _flatten(tf):
    return lambda x, training: tf.reshape(x, [tf.shape(x)[0], -1])


def _size(shape):
    total = 1
    for size in shape:
        total *= size
    return total


def mlp(tf, spec):
    model = _model(tf, "mlp")
    return _sequential(
        model,
        [
            _flatten(tf),
            _dense(tf, model, _size(spec["input_shape"]), 512, tf.nn.relu),
            _dropout(tf, 0.2),
            _dense(tf, model, 512, 512, tf.nn.relu),
            _dropout(tf, 0.2),
            _dense(tf, model, 512, spec["classes"]),
        ],
    )


def cnn(tf, spec):
    model = _model(tf, "cnn")
    height, width, channels = spec["input_shape"]
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return _sequential(
        model,
        [
            _conv(tf, model, 3, channels, 32, tf.nn.relu),
            _conv(tf, model, 3, 32, 64, tf.nn.relu),
            _max_pool(tf),
            _dropout(tf, 0.25),
            _flatten(tf),
            _dense(tf, model, flat, 128, tf.nn.relu),
            _dropout(tf, 0.5),
            _dense(tf, model, 128, spec["classes"]),
        ],
    )


def lenet(tf, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    model = _model(tf, "lenet")
    height, width, channels = spec["input_shape"]
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return _sequential(
        model,
        [
            _conv(tf, model, 5, channels, 20),
            _max_pool(tf),
            _conv(tf, model, 5, 20, 50),
            _max_pool(tf),
            _flatten(tf),
            _dense(tf, model, flat, 500, tf.nn.relu),
            _dense(tf, model, 500, spec["classes"]),
        ],
    )


def _embedding(tf, model, vocabulary, dimension):
    table = _variable(tf, model, tf.random.uniform([vocabulary, dimension], -0.05, 0.05))
    return lambda x, training: tf.nn.embedding_lookup(table, x)


RECURRENT = "Keras' cell in a tf.foldl loop, input projections of all steps at once (no cuDNN)"


def _recurrent(tf, x, kernel, bias, cell, initial):
    """The input projections of every step at once (time-major), then
    ``cell`` over the steps in a tf.foldl loop: the last state."""
    inputs = tf.nn.bias_add(tf.einsum("btf,fg->tbg", x, kernel), bias)
    return tf.foldl(cell, inputs, initializer=initial)


def _lstm(tf, model, fan_in, units):
    """Keras' LSTM: gates i, f, c, o; sigmoid and tanh; forget-gate bias 1."""
    model.recurrent = RECURRENT
    kernel = _variable(tf, model, _glorot(tf, [fan_in, 4 * units]))
    recurrent = _variable(tf, model, _orthogonal(tf, units, 4 * units))
    bias = _variable(
        tf, model, tf.concat([tf.zeros([units]), tf.ones([units]), tf.zeros([2 * units])], 0)
    )

    def cell(state, projected):
        h, c = state
        i, f, g, o = tf.split(projected + tf.matmul(h, recurrent), 4, axis=1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        return tf.sigmoid(o) * tf.tanh(c), c

    def lstm(x, training):
        zeros = tf.zeros([tf.shape(x)[0], units])
        return _recurrent(tf, x, kernel, bias, cell, (zeros, zeros))[0]

    return lstm


def _gru(tf, model, fan_in, units):
    """Keras 3's GRU: gates z, r, h; reset after the recurrent product, with
    an input and a recurrent bias."""
    model.recurrent = RECURRENT
    kernel = _variable(tf, model, _glorot(tf, [fan_in, 3 * units]))
    recurrent = _variable(tf, model, _orthogonal(tf, units, 3 * units))
    bias = _variable(tf, model, tf.zeros([2, 3 * units]))

    def cell(h, projected):
        x_z, x_r, x_h = tf.split(projected, 3, axis=1)
        h_z, h_r, h_h = tf.split(tf.matmul(h, recurrent) + bias[1], 3, axis=1)
        z = tf.sigmoid(x_z + h_z)
        candidate = tf.tanh(x_h + tf.sigmoid(x_r + h_r) * h_h)
        return z * h + (1.0 - z) * candidate

    def gru(x, training):
        return _recurrent(tf, x, kernel, bias[0], cell, tf.zeros([tf.shape(x)[0], units]))

    return gru


def _rows(tf, layer):
    """Keras' TimeDistributed over the rows of an image (N, H, W, C): the
    layer on each row, a sequence of W steps of C features."""

    def rows(x, training):
        shape = tf.shape(x)
        encoded = layer(tf.reshape(x, [-1, shape[2], shape[3]]), training)
        return tf.reshape(encoded, [shape[0], shape[1], encoded.shape[-1]])

    return rows


def hrnn(tf, spec):
    """Hierarchical RNN: an LSTM encodes each row of pixels, a second LSTM
    the sequence of row encodings."""
    model = _model(tf, "hrnn")
    channels = spec["input_shape"][-1]
    return _sequential(
        model,
        [
            _rows(tf, _lstm(tf, model, channels, 128)),
            _lstm(tf, model, 128, 128),
            _dense(tf, model, 128, spec["classes"]),
        ],
    )


def cifar_cnn(tf, spec):
    model = _model(tf, "cifar_cnn")
    height, width, channels = spec["input_shape"]
    flat = 64 * (((height - 2) // 2 - 2) // 2) * (((width - 2) // 2 - 2) // 2)
    relu = tf.nn.relu
    return _sequential(
        model,
        [
            _conv(tf, model, 3, channels, 32, relu, padding="SAME"),
            _conv(tf, model, 3, 32, 32, relu),
            _max_pool(tf),
            _dropout(tf, 0.25),
            _conv(tf, model, 3, 32, 64, relu, padding="SAME"),
            _conv(tf, model, 3, 64, 64, relu),
            _max_pool(tf),
            _dropout(tf, 0.25),
            _flatten(tf),
            _dense(tf, model, flat, 512, relu),
            _dropout(tf, 0.5),
            _dense(tf, model, 512, spec["classes"]),
        ],
    )


def vgg_cifar(tf, spec):
    """The VGG-style CNN of the DeepLearningFrameworks comparison."""
    model = _model(tf, "vgg_cifar")
    height, width, channels = spec["input_shape"]
    flat = 100 * (height // 4) * (width // 4)
    relu = tf.nn.relu
    return _sequential(
        model,
        [
            _conv(tf, model, 3, channels, 50, relu, padding="SAME"),
            _conv(tf, model, 3, 50, 50, relu, padding="SAME"),
            _max_pool(tf),
            _dropout(tf, 0.25),
            _conv(tf, model, 3, 50, 100, relu, padding="SAME"),
            _conv(tf, model, 3, 100, 100, relu, padding="SAME"),
            _max_pool(tf),
            _dropout(tf, 0.25),
            _flatten(tf),
            _dense(tf, model, flat, 512, relu),
            _dropout(tf, 0.5),
            _dense(tf, model, 512, spec["classes"]),
        ],
    )


def imdb_gru(tf, spec):
    model = _model(tf, "imdb_gru")
    return _sequential(
        model,
        [
            _embedding(tf, model, spec["vocabulary"], 125),
            _gru(tf, model, 125, 100),
            _dense(tf, model, 100, spec["classes"]),
        ],
    )


def babi_rnn(tf, spec):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    model = _model(tf, "babi_rnn")
    story_embedding = _embedding(tf, model, spec["vocabulary"], 50)
    question_embedding = _embedding(tf, model, spec["vocabulary"], 50)
    story_lstm = _lstm(tf, model, 50, 100)
    question_lstm = _lstm(tf, model, 50, 100)
    answer = _dense(tf, model, 200, spec["classes"])

    def forward(x, training):
        story = story_lstm(story_embedding(x["story"], training), training)
        question = question_lstm(question_embedding(x["question"], training), training)
        return answer(tf.concat([story, question], 1), training)

    model.forward = forward
    return model


def _batch_norm(tf, model, channels):
    """Keras' BatchNormalization at inference: moving statistics (counted as
    parameters, not trained), epsilon 1.001e-5 as Keras' ResNet."""
    gamma = _variable(tf, model, tf.ones([channels]))
    beta = _variable(tf, model, tf.zeros([channels]))
    mean = _variable(tf, model, tf.zeros([channels]), trainable=False)
    variance = _variable(tf, model, tf.ones([channels]), trainable=False)
    return lambda x: tf.nn.batch_normalization(x, mean, variance, beta, gamma, 1.001e-5)


def _conv_bn(tf, model, size, channels, filters, stride=1, padding="VALID"):
    conv = _conv(tf, model, size, channels, filters, padding=padding, stride=stride)
    norm = _batch_norm(tf, model, filters)
    return lambda x: norm(conv(x, False))


def _bottleneck(tf, model, channels, filters, stride):
    """Keras' ResNet50 block1: 1x1 (strided), 3x3, 1x1 x 4; a projection
    shortcut where the shape changes."""
    shortcut = None
    if stride != 1 or channels != 4 * filters:
        shortcut = _conv_bn(tf, model, 1, channels, 4 * filters, stride)
    reduce = _conv_bn(tf, model, 1, channels, filters, stride)
    middle = _conv_bn(tf, model, 3, filters, filters, padding="SAME")
    expand = _conv_bn(tf, model, 1, filters, 4 * filters)

    def block(x):
        y = expand(tf.nn.relu(middle(tf.nn.relu(reduce(x)))))
        return tf.nn.relu((shortcut(x) if shortcut else x) + y)

    return block


def resnet50(tf, spec):
    """ResNet-50 without its classifier: global average pooling to 2048
    features (Keras' ResNet50(include_top=False, pooling="avg")), for
    inference. Random weights: they do not change the speed."""
    model = _model(tf, "resnet50", output="features")
    stem = _conv_bn(tf, model, 7, spec["input_shape"][-1], 64, stride=2)
    blocks, channels = [], 64
    for filters, count, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for index in range(count):
            blocks.append(_bottleneck(tf, model, channels, filters, stride if index == 0 else 1))
            channels = 4 * filters

    def forward(x, training):
        x = tf.nn.relu(stem(tf.pad(x, [[0, 0], [3, 3], [3, 3], [0, 0]])))
        x = tf.nn.max_pool2d(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), 3, 2, "VALID")
        for block in blocks:
            x = block(x)
        return tf.reduce_mean(x, axis=[1, 2])

    model.forward = forward
    return model


# The last layer gives logits: the loss is softmax cross-entropy on them (one
# fused, stable op) and ``output`` applies the softmax, as Keras' last layer.
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


def optimizer(tf, variables, settings):
    """The optimizer of the config's ``settings`` over ``variables``: zero
    slot variables and the step count (Keras' ``iterations``) in a tf.Module;
    ``apply(gradients)`` runs one update, with Keras 2's ``decay`` as
    inverse-time decay of the learning rate per step."""
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
