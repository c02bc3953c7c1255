"""lenet in TensorFlow (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    model = tensorflow_layers.new_model(tf, "lenet")
    height, width, channels = spec["input_shape"]
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.conv_layer(tf, model, 5, channels, 20),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.conv_layer(tf, model, 5, 20, 50),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.flatten(tf),
            tensorflow_layers.dense_layer(tf, model, flat, 500, tf.nn.relu),
            tensorflow_layers.dense_layer(tf, model, 500, spec["classes"]),
        ],
    )
