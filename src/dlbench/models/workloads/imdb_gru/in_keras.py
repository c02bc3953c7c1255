"""imdb_gru in Keras (the workload: ``dlbench.models.workloads.imdb_gru``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    layers = keras.layers
    return keras_layers.sequential(
        keras,
        "imdb_gru",
        spec["input_shape"],
        layers.Embedding(spec["vocabulary"], 125),
        layers.GRU(100),
        layers.Dense(spec["classes"], activation="softmax"),
    )
