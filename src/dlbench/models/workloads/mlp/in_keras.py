"""mlp in Keras (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    layers = keras.layers
    return keras_layers.sequential(
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
