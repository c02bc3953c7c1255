"""vgg_cifar in TensorFlow (the workload: ``dlbench.models.workloads.vgg_cifar``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    """The VGG-style CNN of the DeepLearningFrameworks comparison."""
    model = tensorflow_layers.new_model(tf, "vgg_cifar")
    height, width, channels = spec["input_shape"]
    flat = 100 * (height // 4) * (width // 4)
    relu = tf.nn.relu
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.conv_layer(tf, model, 3, channels, 50, relu, padding="SAME"),
            tensorflow_layers.conv_layer(tf, model, 3, 50, 50, relu, padding="SAME"),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.dropout(tf, 0.25),
            tensorflow_layers.conv_layer(tf, model, 3, 50, 100, relu, padding="SAME"),
            tensorflow_layers.conv_layer(tf, model, 3, 100, 100, relu, padding="SAME"),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.dropout(tf, 0.25),
            tensorflow_layers.flatten(tf),
            tensorflow_layers.dense_layer(tf, model, flat, 512, relu),
            tensorflow_layers.dropout(tf, 0.5),
            tensorflow_layers.dense_layer(tf, model, 512, spec["classes"]),
        ],
    )
