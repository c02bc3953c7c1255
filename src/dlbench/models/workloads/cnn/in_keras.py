"""cnn in Keras (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    layers = keras.layers
    return keras_layers.sequential(
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
