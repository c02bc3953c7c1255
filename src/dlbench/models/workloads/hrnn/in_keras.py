"""hrnn in Keras (the workload: ``dlbench.models.workloads.hrnn``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    """Hierarchical RNN: an LSTM encodes each row of pixels, a second LSTM
    the sequence of row encodings."""
    layers = keras.layers
    return keras_layers.sequential(
        keras,
        "hrnn",
        spec["input_shape"],
        layers.TimeDistributed(layers.LSTM(128)),
        layers.LSTM(128),
        layers.Dense(spec["classes"], activation="softmax"),
    )
