"""deep_mnist in TensorFlow (the workload: ``dlbench.models.workloads.deep_mnist``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    model = tensorflow_layers.new_model(tf, "deep_mnist")
    height, width, channels = spec["input_shape"]
    flat = 64 * (height // 4) * (width // 4)
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.conv_layer(tf, model, 5, channels, 32, tf.nn.relu, padding="SAME"),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.conv_layer(tf, model, 5, 32, 64, tf.nn.relu, padding="SAME"),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.flatten(tf),
            tensorflow_layers.dense_layer(tf, model, flat, 1024, tf.nn.relu),
            tensorflow_layers.dropout(tf, 0.5),
            tensorflow_layers.dense_layer(tf, model, 1024, spec["classes"]),
        ],
    )
