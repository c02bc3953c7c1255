"""What the workloads in CNTK share (dlbench/models/workloads/<model>/in_cntk.py):
CNTK's own layers library (cntk.layers), no Keras, layer for layer as the
Keras definitions (in_keras.py): same layers and parameter counts, Glorot-
uniform weights and zero biases (CNTK's defaults, as Keras'). A model is a
layers function that the adapter applies to its input variable; images are
channels-first (C, H, W), CNTK's layout, and the last layer gives logits
(the adapter's loss is cross_entropy_with_softmax, its predict a softmax).
CNTK's Dropout is active in train_minibatch only. Importable without cntk
until a model is built (Python 3.6: CNTK's last wheels)."""

from dlbench.models.layers import dropout_on


def channels_first_shape(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


def dropout(C, rate):
    """CNTK's Dropout (active in train_minibatch only), or none where the
    process runs without dropout (dlbench.models.layers.set_dropout)."""
    return C.layers.Dropout(rate) if dropout_on() else C.layers.identity


def max_pool(C):
    """Keras' MaxPooling2D(2): the window is the stride (CNTK's default stride is 1)."""
    return C.layers.MaxPooling((2, 2), strides=(2, 2))


# Keras' optimizer settings -> CNTK's learners. Adam and AdaDelta are Keras'
# rules (Adam's first moment with unit gain, as Keras' (1 - beta_1) g); SGD's
# momentum is the classic one (no unit gain). CNTK's RMSProp multiplies each
# step by an adaptive factor (inc, dec, bounded by min and max): held at 1
# (bounds 1 and 1 + 1e-9: CNTK wants max > min; no averaging of it) it is
# Keras' rule, with CNTK's own fixed epsilon (no argument for it).
OPTIMIZERS = {
    "rmsprop": {"rho": "gamma", "epsilon": None, "momentum": None, "centered": None},
    "adadelta": {"rho": "rho", "epsilon": "epsilon"},
    "adam": {"beta_1": "momentum", "beta_2": "variance_momentum", "epsilon": "epsilon"},
    "sgd": {"momentum": "momentum", "nesterov": None},
}
MOMENTA = ("momentum", "variance_momentum")


def optimizer(C, parameters, settings, native):
    """The config's optimizer as a CNTK learner over ``parameters``, at the
    learning rate per minibatch (the mean gradient, as Keras), and what of
    the settings CNTK could not take."""
    name = settings["name"]
    kwargs = native.optimizer_arguments(settings, OPTIMIZERS[name])
    for key in MOMENTA:
        if key in kwargs:
            kwargs[key] = C.learners.momentum_schedule(kwargs[key])
    lr = C.learners.learning_parameter_schedule(settings["learning_rate"])
    # CNTK's gradient is the minibatch's sum; Keras' is the mean of its loss.
    kwargs["use_mean_gradient"] = True
    if settings.get("decay"):
        raise ValueError("optimizer {}: no inverse-time decay in CNTK's learners".format(name))
    notes = {}
    if name == "rmsprop":
        if settings.get("momentum") or settings.get("centered"):
            raise ValueError("optimizer rmsprop: CNTK's RMSProp has no momentum, no centered form")
        notes["epsilon"] = "CNTK's own (not settable); asked {}".format(settings.get("epsilon"))
        notes["rule"] = "CNTK's RMSProp: its own epsilon, not Keras' (not settable)"
        learner = C.learners.rmsprop(
            parameters,
            lr,
            inc=1.5,
            dec=0.5,
            max=1.0 + 1e-9,
            min=1.0,
            need_ave_multiplier=False,
            **kwargs,
        )
    elif name == "adadelta":
        learner = C.learners.adadelta(parameters, lr, **kwargs)
    elif name == "adam":
        learner = C.learners.adam(parameters, lr, unit_gain=True, **kwargs)
    else:
        if settings.get("nesterov"):
            raise ValueError("optimizer sgd: nesterov is not CNTK's momentum_sgd")
        kwargs.setdefault("momentum", C.learners.momentum_schedule(0.0))
        learner = C.learners.momentum_sgd(parameters, lr, unit_gain=False, **kwargs)
    return learner, notes


def keras_rmsprop(C, settings, batch_size):
    """Keras 3's RMSprop (no momentum, not centered) as the update function
    of cntk.learners.universal: v = rho v + (1 - rho) g^2, then
    p -= lr g / sqrt(v + epsilon), with the given epsilon. The learner is
    handed the minibatch's summed gradient: divided by ``batch_size`` it is
    the mean's, as Keras'."""
    if settings.get("momentum") or settings.get("centered"):
        raise ValueError("optimizer rmsprop: only the plain rule is written for CNTK")
    rho, epsilon = settings.get("rho", 0.9), settings.get("epsilon", 1e-7)  # Keras' defaults
    rate = settings["learning_rate"]

    def update(parameters, gradients):
        found = []
        for parameter, summed in zip(parameters, gradients):
            gradient = summed / batch_size
            velocity = C.constant(0, shape=parameter.shape, dtype=parameter.dtype)
            velocity = C.assign(velocity, rho * velocity + (1 - rho) * C.square(gradient))
            step = rate * gradient / C.sqrt(velocity + epsilon)
            found.append(C.assign(parameter, parameter - step))
        return C.combine(found)

    return update


def words_input(C, spec):
    """A review as a sequence of word ids (one float per step): the embedding
    gathers its rows, so its gradient is dense (CNTK's Adam has no CPU update
    for the sparse gradient a one-hot input would give)."""
    return C.sequence.input_variable(1, "float32", name="words")


def words(x):
    """Word-id rows as CNTK's sequences: (reviews, steps, 1) floats."""
    return x.astype("float32")[:, :, None]


def embedding(C, vocabulary, width):
    """Keras' Embedding (uniform in +-0.05): rows of a table, gathered."""
    table = C.Parameter((vocabulary, width), init=C.uniform(0.05), name="E")

    @C.Function
    def embed(ids):
        return C.reshape(C.gather(table, ids), width)

    return embed


def orthogonal(rows, columns):
    """Keras' Orthogonal initializer, from numpy's seeded generator."""
    import numpy

    flat = numpy.random.normal(size=(max(rows, columns), min(rows, columns)))
    q, r = numpy.linalg.qr(flat)
    q *= numpy.sign(numpy.diag(r))
    return numpy.ascontiguousarray(q if rows >= columns else q.T, dtype="float32")


def gru(C, units):
    """Keras 3's GRU (reset_after: the reset gate applied after the recurrent
    matmul, two biases; gates z, r, h), written with CNTK's ops as a step of
    cntk.layers.Recurrence: CNTK's own GRU has one bias and the other form."""
    kernel = C.Parameter((C.InferredDimension, 3 * units), init=C.glorot_uniform(), name="W")
    recurrent = C.Parameter((units, 3 * units), init=orthogonal(units, 3 * units), name="U")
    input_bias = C.Parameter(3 * units, init=0, name="b")
    recurrent_bias = C.Parameter(3 * units, init=0, name="b_recurrent")

    @C.Function
    def step(h, x):
        inputs = C.times(x, kernel) + input_bias
        hidden = C.times(h, recurrent) + recurrent_bias

        def gate(values, index):
            return C.slice(values, 0, index * units, (index + 1) * units)

        z = C.sigmoid(gate(inputs, 0) + gate(hidden, 0))
        r = C.sigmoid(gate(inputs, 1) + gate(hidden, 1))
        candidate = C.tanh(gate(inputs, 2) + r * gate(hidden, 2))
        return z * h + (1 - z) * candidate

    return C.layers.Recurrence(step)


def keras_weights(layout, weights):
    """The shared initial weights (dlbench.models.initial_weights) in CNTK's shapes,
    [(shape, values)]: a dense weight is (inputs..., units) with a
    flattened feature map's inputs channels-first, a convolution's
    (filters, channels, height, width) and its bias (filters, 1, 1)."""
    from dlbench.models import initial_weights as shared

    converted = []
    for keras_class, arrays, flattened_from in shared.by_layer(layout, weights):
        if keras_class == "Dense":
            kernel = shared.dense_out_in(arrays["kernel"], flattened_from).T
            if flattened_from:
                height, width, channels = flattened_from
                kernel = kernel.reshape(channels, height, width, -1)
            found = [kernel.copy(), arrays["bias"]]
        elif keras_class == "Conv2D":
            bias = arrays["bias"]
            found = [shared.conv_oihw(arrays["kernel"]), bias.reshape(bias.shape[0], 1, 1)]
        else:
            raise ValueError("no CNTK conversion of Keras' {} here".format(keras_class))
        converted.extend((tuple(values.shape), values) for values in found)
    return converted
