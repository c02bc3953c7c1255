"""cifar_cnn in TensorFlow (the workload: ``dlbench.models.workloads.cifar_cnn``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    model = tensorflow_layers.new_model(tf, "cifar_cnn")
    height, width, channels = spec["input_shape"]
    flat = 64 * (((height - 2) // 2 - 2) // 2) * (((width - 2) // 2 - 2) // 2)
    relu = tf.nn.relu
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.conv_layer(tf, model, 3, channels, 32, relu, padding="SAME"),
            tensorflow_layers.conv_layer(tf, model, 3, 32, 32, relu),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.dropout(tf, 0.25),
            tensorflow_layers.conv_layer(tf, model, 3, 32, 64, relu, padding="SAME"),
            tensorflow_layers.conv_layer(tf, model, 3, 64, 64, relu),
            tensorflow_layers.max_pool(tf),
            tensorflow_layers.dropout(tf, 0.25),
            tensorflow_layers.flatten(tf),
            tensorflow_layers.dense_layer(tf, model, flat, 512, relu),
            tensorflow_layers.dropout(tf, 0.5),
            tensorflow_layers.dense_layer(tf, model, 512, spec["classes"]),
        ],
    )
