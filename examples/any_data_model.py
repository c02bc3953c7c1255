"""A Keras model of your own that fits any dataset of config/questions/own-data.yaml:
the workflow calls ``build(keras, spec)`` with the dataset's spec, read from its
files (``input_shape``, ``classes`` and, for word ids, ``vocabulary``). Word ids
go through an embedding, images through two convolutions, features straight to
the dense layers; every branch ends in a softmax over the classes."""


def build(keras, spec):
    layers = keras.layers
    shape = tuple(spec["input_shape"])
    stack = [keras.Input(shape=shape)]
    if spec.get("vocabulary"):  # word ids
        stack += [layers.Embedding(spec["vocabulary"], 16), layers.GlobalAveragePooling1D()]
    elif len(shape) == 3:  # images, channels last
        stack += [
            layers.Conv2D(8, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(16, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Flatten(),
        ]
    else:
        stack += [layers.Flatten()]
    stack += [
        layers.Dense(32, activation="relu"),
        layers.Dense(spec["classes"], activation="softmax"),
    ]
    return keras.Sequential(stack)
