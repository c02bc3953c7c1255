"""deep_mnist in Keras (the workload: ``dlbench.models.workloads.deep_mnist``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    layers = keras.layers
    return keras_layers.sequential(
        keras,
        "deep_mnist",
        spec["input_shape"],
        layers.Conv2D(32, (5, 5), padding="same", activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, (5, 5), padding="same", activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dense(1024, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(spec["classes"], activation="softmax"),
    )
