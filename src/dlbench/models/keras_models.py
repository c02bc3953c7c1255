"""The workloads of WORKLOADS.md, defined once for Keras.

Each builder takes the ``keras`` module it should use, so the same definition
serves Keras 3 on every backend (and Keras 2 through a compatibility layer).
Every optimizer setting is written out in the config, never left to a
default, because defaults changed between Keras versions.
Importable on Python 3.6.
"""


def mlp(keras, input_shape, classes):
    layers = keras.layers
    return keras.Sequential(
        [
            keras.Input(shape=tuple(input_shape)),
            layers.Flatten(),
            layers.Dense(512, activation="relu"),
            layers.Dropout(0.2),
            layers.Dense(512, activation="relu"),
            layers.Dropout(0.2),
            layers.Dense(classes, activation="softmax"),
        ],
        name="mlp",
    )


def cnn(keras, input_shape, classes):
    layers = keras.layers
    return keras.Sequential(
        [
            keras.Input(shape=tuple(input_shape)),
            layers.Conv2D(32, (3, 3), activation="relu"),
            layers.Conv2D(64, (3, 3), activation="relu"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Dropout(0.25),
            layers.Flatten(),
            layers.Dense(128, activation="relu"),
            layers.Dropout(0.5),
            layers.Dense(classes, activation="softmax"),
        ],
        name="cnn",
    )


BUILDERS = {"mlp": mlp, "cnn": cnn}


def optimizer(keras, settings):
    """An optimizer from the config's explicit settings: ``name`` plus the
    constructor's keyword arguments, passed through unchanged."""
    classes = {
        "rmsprop": keras.optimizers.RMSprop,
        "adadelta": keras.optimizers.Adadelta,
        "adam": keras.optimizers.Adam,
        "sgd": keras.optimizers.SGD,
    }
    kwargs = dict(settings)
    return classes[kwargs.pop("name")](**kwargs)
