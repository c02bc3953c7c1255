"""The workloads in MXNet Gluon, layer for layer as the Keras definitions
(keras_models.py): same layers, parameter counts and initial weight
distributions (Glorot-uniform weights, zero biases, as Keras' defaults).
Images arrive channels-last; the models take channels-first (NCHW, the
layout of MXNet's CPU convolutions). Input sizes are given to every layer so
that the parameters exist (and can be counted) before the first batch.
Importable without mxnet until a model is built."""


def _glorot(mx):
    # Keras' glorot_uniform: U(+-sqrt(6 / (fan_in + fan_out))), the fans of a
    # convolution kernel counting its receptive field, as MXNet's Xavier.
    return mx.init.Xavier(rnd_type="uniform", factor_type="avg", magnitude=3)


def _network(mx, *layers):
    net = mx.gluon.nn.HybridSequential()
    net.add(*layers)
    net.initialize(_glorot(mx))  # biases: zeros (Gluon's default bias_initializer)
    return net


def _channels(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


def mlp(mx, spec):
    nn = mx.gluon.nn
    channels, height, width = _channels(spec)
    return _network(
        mx,
        nn.Flatten(),
        nn.Dense(512, activation="relu", in_units=channels * height * width),
        nn.Dropout(0.2),
        nn.Dense(512, activation="relu", in_units=512),
        nn.Dropout(0.2),
        nn.Dense(spec["classes"], in_units=512),
    )


def cnn(mx, spec):
    nn = mx.gluon.nn
    channels, height, width = _channels(spec)
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return _network(
        mx,
        nn.Conv2D(32, 3, activation="relu", in_channels=channels),
        nn.Conv2D(64, 3, activation="relu", in_channels=32),
        nn.MaxPool2D(2),
        nn.Dropout(0.25),
        nn.Flatten(),
        nn.Dense(128, activation="relu", in_units=flat),
        nn.Dropout(0.5),
        nn.Dense(spec["classes"], in_units=128),
    )


def lenet(mx, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    nn = mx.gluon.nn
    channels, height, width = _channels(spec)
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return _network(
        mx,
        nn.Conv2D(20, 5, in_channels=channels),
        nn.MaxPool2D(2),
        nn.Conv2D(50, 5, in_channels=20),
        nn.MaxPool2D(2),
        nn.Flatten(),
        nn.Dense(500, activation="relu", in_units=flat),
        nn.Dense(spec["classes"], in_units=500),
    )


# The last layer gives logits: the loss is Gluon's SoftmaxCrossEntropyLoss on
# them (one fused, stable op) and predict applies the softmax, as Keras'
# output layer.
BUILDERS = {"mlp": mlp, "cnn": cnn, "lenet": lenet}

# Keras' optimizer settings -> mxnet.optimizer arguments. MXNet's RMSProp
# is Keras 3's update (epsilon inside the square root: lr g / sqrt(n + eps);
# Keras 2 added it after the root); its momentum (gamma2) exists only in the
# centered variant. AdaDelta has no learning rate in MXNet: it is Keras'
# update at learning_rate 1.0. Adam and SGD are Keras' update rules; SGD
# with nesterov is MXNet's NAG.
OPTIMIZERS = {
    "rmsprop": {
        "rho": "gamma1",
        "epsilon": "epsilon",
        "centered": "centered",
        "momentum": "gamma2",
    },
    "adadelta": {"rho": "rho", "epsilon": "epsilon"},
    "adam": {"beta_1": "beta1", "beta_2": "beta2", "epsilon": "epsilon"},
    "sgd": {"momentum": "momentum", "nesterov": None},
}


def optimizer(mx, settings, native):
    """The config's optimizer as an mxnet.optimizer.Optimizer."""
    name = settings["name"]
    kwargs = native.optimizer_arguments(settings, OPTIMIZERS[name])
    kwargs["learning_rate"] = settings["learning_rate"]
    if name == "rmsprop" and kwargs.get("gamma2", 0.0) and not kwargs.get("centered"):
        raise ValueError("optimizer rmsprop: MXNet has momentum only when centered")
    if name == "adadelta" and settings["learning_rate"] != 1.0:
        raise ValueError("optimizer adadelta: MXNet's AdaDelta has no learning rate (Keras' 1.0)")
    if name == "sgd" and settings.get("nesterov"):
        name = "nag"
    return mx.optimizer.create(name, **kwargs)
