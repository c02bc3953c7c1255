"""The workloads of WORKLOADS.md, defined once for Keras.

Each builder takes the ``keras`` module it should use, so the same definition
serves Keras 3 on every backend (and Keras 2 through a compatibility layer).
Every optimizer setting is written out in the config, never left to a
default, because defaults changed between Keras versions.
Importable on Python 3.6.
"""


def _sequential(keras, name, input_shape, *layers):
    return keras.Sequential([keras.Input(shape=tuple(input_shape))] + list(layers), name=name)


def mlp(keras, spec):
    layers = keras.layers
    return _sequential(
        keras,
        "mlp",
        spec["input_shape"],
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.2),
        layers.Dense(spec["classes"], activation="softmax"),
    )


def cnn(keras, spec):
    layers = keras.layers
    return _sequential(
        keras,
        "cnn",
        spec["input_shape"],
        layers.Conv2D(32, (3, 3), activation="relu"),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(128, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(spec["classes"], activation="softmax"),
    )


def hrnn(keras, spec):
    """Hierarchical RNN: an LSTM encodes each row of pixels, a second LSTM
    the sequence of row encodings."""
    layers = keras.layers
    return _sequential(
        keras,
        "hrnn",
        spec["input_shape"],
        layers.TimeDistributed(layers.LSTM(128)),
        layers.LSTM(128),
        layers.Dense(spec["classes"], activation="softmax"),
    )


def cifar_cnn(keras, spec):
    layers = keras.layers
    return _sequential(
        keras,
        "cifar_cnn",
        spec["input_shape"],
        layers.Conv2D(32, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(32, (3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Dropout(0.25),
        layers.Conv2D(64, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(spec["classes"], activation="softmax"),
    )


def vgg_cifar(keras, spec):
    """The VGG-style CNN of the DeepLearningFrameworks comparison."""
    layers = keras.layers
    return _sequential(
        keras,
        "vgg_cifar",
        spec["input_shape"],
        layers.Conv2D(50, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(50, (3, 3), padding="same", activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2)),
        layers.Dropout(0.25),
        layers.Conv2D(100, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(100, (3, 3), padding="same", activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2)),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(spec["classes"], activation="softmax"),
    )


def imdb_gru(keras, spec):
    layers = keras.layers
    return _sequential(
        keras,
        "imdb_gru",
        spec["input_shape"],
        layers.Embedding(spec["vocabulary"], 125),
        layers.GRU(100),
        layers.Dense(spec["classes"], activation="softmax"),
    )


def babi_rnn(keras, spec):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    layers = keras.layers
    story = keras.Input(shape=(spec["story_length"],), name="story")
    question = keras.Input(shape=(spec["query_length"],), name="question")
    encoded_story = layers.LSTM(100)(layers.Embedding(spec["vocabulary"], 50)(story))
    encoded_question = layers.LSTM(100)(layers.Embedding(spec["vocabulary"], 50)(question))
    merged = layers.concatenate([encoded_story, encoded_question])
    answer = layers.Dense(spec["classes"], activation="softmax")(merged)
    return keras.Model([story, question], answer, name="babi_rnn")


def resnet50(keras, spec):
    """ResNet-50 without its classifier: global average pooling to 2048
    features. Random weights: they do not change the speed."""
    return keras.applications.ResNet50(
        include_top=False, weights=None, pooling="avg", input_shape=tuple(spec["input_shape"])
    )


def lenet(keras, spec):
    """LeNet as in the cuDNN/TensorFlow/Keras latency comparison (no
    activation on the convolutions, as in Caffe's LeNet)."""
    layers = keras.layers
    return _sequential(
        keras,
        "lenet",
        spec["input_shape"],
        layers.Conv2D(20, (5, 5)),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(50, (5, 5)),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dense(500, activation="relu"),
        layers.Dense(spec["classes"], activation="softmax"),
    )


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
