"""The workloads in Chainer, layer for layer as the Keras definitions
(keras_models.py): same layers, parameter counts and initial weight
distributions (Glorot-uniform weights, zero biases, as Keras' defaults).
Images arrive channels-last; the models take channels-first (Chainer's
layout). Dropout follows chainer.config.train. Importable without chainer
until a model is built."""

import functools


def _channels(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


def _layers(chainer):
    """Linear and Convolution2D with Keras' initialisers (Chainer's
    GlorotUniform counts a kernel's receptive field in its fans, as Keras)."""
    glorot = chainer.initializers.GlorotUniform()
    links = chainer.links
    dense = functools.partial(links.Linear, initialW=glorot, initial_bias=0)
    conv = functools.partial(links.Convolution2D, initialW=glorot, initial_bias=0)
    return dense, conv, chainer.functions


def _pool(functions):
    # cover_all=False: Keras' "valid" pooling, which drops odd edges
    return functools.partial(functions.max_pooling_2d, ksize=2, cover_all=False)


def _dropout(functions, ratio):
    return functools.partial(functions.dropout, ratio=ratio)


def mlp(chainer, spec):
    dense, _, F = _layers(chainer)
    channels, height, width = _channels(spec)
    return chainer.Sequential(
        dense(channels * height * width, 512),
        F.relu,
        _dropout(F, 0.2),
        dense(512, 512),
        F.relu,
        _dropout(F, 0.2),
        dense(512, spec["classes"]),
    )


def cnn(chainer, spec):
    dense, conv, F = _layers(chainer)
    channels, height, width = _channels(spec)
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return chainer.Sequential(
        conv(channels, 32, 3),
        F.relu,
        conv(32, 64, 3),
        F.relu,
        _pool(F),
        _dropout(F, 0.25),
        dense(flat, 128),  # Linear flattens its input
        F.relu,
        _dropout(F, 0.5),
        dense(128, spec["classes"]),
    )


def lenet(chainer, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    dense, conv, F = _layers(chainer)
    channels, height, width = _channels(spec)
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return chainer.Sequential(
        conv(channels, 20, 5),
        _pool(F),
        conv(20, 50, 5),
        _pool(F),
        dense(flat, 500),
        F.relu,
        dense(500, spec["classes"]),
    )


# The last layer gives logits: the loss is F.softmax_cross_entropy on them
# (one fused, stable function) and predict applies the softmax, as Keras'
# output layer.
BUILDERS = {"mlp": mlp, "cnn": cnn, "lenet": lenet}

# Keras' optimizer settings -> chainer.optimizers (class, renames, fixed
# settings: values Chainer's rule always runs). RMSprop with eps inside the
# square root is Keras 3's update; Chainer's has no momentum or centered
# variant. AdaDelta has no learning rate in Chainer: it is Keras' update at
# learning_rate 1.0. Adam's learning rate is ``alpha``. Chainer's NesterovAG
# is another formulation than Keras' nesterov, so it is refused.
OPTIMIZERS = {
    "rmsprop": (
        "RMSprop",
        {"rho": "alpha", "epsilon": "eps", "momentum": None, "centered": None},
        {"momentum": 0.0, "centered": False},
    ),
    "adadelta": ("AdaDelta", {"rho": "rho", "epsilon": "eps"}, {"learning_rate": 1.0}),
    "adam": ("Adam", {"beta_1": "beta1", "beta_2": "beta2", "epsilon": "eps"}, {}),
    "sgd": ("MomentumSGD", {"momentum": "momentum", "nesterov": None}, {"nesterov": False}),
}
LEARNING_RATE = {"RMSprop": "lr", "AdaDelta": None, "Adam": "alpha", "MomentumSGD": "lr"}


def optimizer(chainer, settings, native):
    """The config's optimizer; returns it and the name of its learning-rate
    hyperparameter (None: it has none)."""
    name, renames, fixed = OPTIMIZERS[settings["name"]]
    kwargs = native.optimizer_arguments(settings, renames)
    for key, only in fixed.items():
        if settings.get(key, only) != only:
            raise ValueError(
                "optimizer {}: Chainer's {} runs only {}={}".format(
                    settings["name"], name, key, only
                )
            )
    if name == "RMSprop":
        kwargs["eps_inside_sqrt"] = True
    lr_name = LEARNING_RATE[name]
    if lr_name:
        kwargs[lr_name] = settings["learning_rate"]
    return getattr(chainer.optimizers, name)(**kwargs), lr_name
