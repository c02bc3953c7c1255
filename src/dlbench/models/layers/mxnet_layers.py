"""What the workloads in MXNet Gluon share
(dlbench/models/workloads/<model>/in_mxnet.py), layer for layer as the Keras
definitions (in_keras.py): same layers, parameter counts and initial weight
distributions (Glorot-uniform weights, zero biases, as Keras' defaults).
Images arrive channels-last; the models take channels-first (NCHW, the
layout of MXNet's CPU convolutions). Input sizes are given to every layer so
that the parameters exist (and can be counted) before the first batch.
Importable without mxnet until a model is built."""


def glorot(mx):
    # Keras' glorot_uniform: U(+-sqrt(6 / (fan_in + fan_out))), the fans of a
    # convolution kernel counting its receptive field, as MXNet's Xavier.
    return mx.init.Xavier(rnd_type="uniform", factor_type="avg", magnitude=3)


def network(mx, *layers):
    net = mx.gluon.nn.HybridSequential()
    net.add(*layers)
    net.initialize(glorot(mx))  # biases: zeros (Gluon's default bias_initializer)
    return net


def channels_first_shape(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


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
