"""cnn in TensorFlow (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    model = tensorflow_layers.new_model(tf, "cnn")
    height, width, channels = spec["input_shape"]
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.conv_layer(tf, model, 3, channels, 32, tf.nn.relu),
            tensorflow_layers.conv_layer(tf, model, 3, 32, 64, tf.nn.relu),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.dropout(tf, 0.25),
            tensorflow_layers.flatten(tf),
            tensorflow_layers.dense_layer(tf, model, flat, 128, tf.nn.relu),
            tensorflow_layers.dropout(tf, 0.5),
            tensorflow_layers.dense_layer(tf, model, 128, spec["classes"]),
        ],
    )
