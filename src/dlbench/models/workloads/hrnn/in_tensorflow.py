"""hrnn in TensorFlow (the workload: ``dlbench.models.workloads.hrnn``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    """Hierarchical RNN: an LSTM encodes each row of pixels, a second LSTM
    the sequence of row encodings."""
    model = tensorflow_layers.new_model(tf, "hrnn")
    channels = spec["input_shape"][-1]
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.over_rows(tf, tensorflow_layers.lstm_layer(tf, model, channels, 128)),
            tensorflow_layers.lstm_layer(tf, model, 128, 128),
            tensorflow_layers.dense_layer(tf, model, 128, spec["classes"]),
        ],
    )
