"""What the workloads in Chainer share
(dlbench/models/workloads/<model>/in_chainer.py), layer for layer as the Keras
definitions (in_keras.py): same layers, parameter counts and initial weight
distributions (Glorot-uniform weights, zero biases, as Keras' defaults).
Images arrive channels-last; the models take channels-first (Chainer's
layout). Dropout follows chainer.config.train. Importable without chainer
until a model is built."""

import functools

from dlbench.models.layers import dropout_on


def channels_first_shape(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


def layers(chainer):
    """Linear and Convolution2D with Keras' initialisers (Chainer's
    GlorotUniform counts a kernel's receptive field in its fans, as Keras)."""
    glorot = chainer.initializers.GlorotUniform()
    links = chainer.links
    dense = functools.partial(links.Linear, initialW=glorot, initial_bias=0)
    conv = functools.partial(links.Convolution2D, initialW=glorot, initial_bias=0)
    return dense, conv, chainer.functions


def pool(functions):
    # cover_all=False: Keras' "valid" pooling, which drops odd edges
    return functools.partial(functions.max_pooling_2d, ksize=2, cover_all=False)


def dropout(functions, ratio):
    """Chainer's dropout on a numpy array, with a new mask at every call.
    Both found by the equivalence check's dropout draws, on Chainer 7.8 with
    iDeep (its CPU acceleration, on wherever it is installed): through iDeep
    ``F.dropout`` draws one mask and repeats it at every call, for every
    batch; and its numpy path, given iDeep's array of a convolution's output
    (kept in a blocked layout), multiplies the mask in another order than
    the array's (the CNN's outputs spread 27 % more than every other
    backend's over 200 draws). ``F.copy`` to the CPU gives it a numpy array,
    and the numpy path draws from numpy's generator, seeded by the adapter."""
    import chainer

    def layer(x):
        if not dropout_on():
            return x
        with chainer.using_config("use_ideep", "never"):
            return functions.dropout(functions.copy(x, -1), ratio=ratio)

    return layer


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
