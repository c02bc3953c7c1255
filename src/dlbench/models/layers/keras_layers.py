"""What the Keras definitions of the workloads
(dlbench/models/workloads/<model>/in_keras.py) share, and the optimizer mapping.
Each builder takes the ``keras`` module it should use, so the same
definition serves Keras 3 on every backend (and Keras 2 through a
compatibility layer). Every optimizer setting is written out in the config,
never left to a default, because defaults changed between Keras versions.
Importable on Python 3.6.
"""


def sequential(keras, name, input_shape, *layers):
    return keras.Sequential([keras.Input(shape=tuple(input_shape))] + list(layers), name=name)


# The config's optimizer names and Keras' classes for them.
OPTIMIZERS = {"rmsprop": "RMSprop", "adadelta": "Adadelta", "adam": "Adam", "sgd": "SGD"}


def optimizer(keras, settings):
    """An optimizer from the config's explicit settings: ``name`` plus the
    constructor's keyword arguments. Keras 2's ``decay`` (learning rate
    divided by 1 + decay x iterations) becomes the same inverse-time schedule."""
    kwargs = dict(settings)
    decay = kwargs.pop("decay", 0.0)
    if decay:
        kwargs["learning_rate"] = keras.optimizers.schedules.InverseTimeDecay(
            kwargs["learning_rate"], decay_steps=1, decay_rate=decay
        )
    return getattr(keras.optimizers, OPTIMIZERS[kwargs.pop("name")])(**kwargs)
