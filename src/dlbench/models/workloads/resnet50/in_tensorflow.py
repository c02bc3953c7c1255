"""resnet50 in TensorFlow (the workload: ``dlbench.models.workloads.resnet50``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    """ResNet-50 without its classifier: global average pooling to 2048
    features (Keras' ResNet50(include_top=False, pooling="avg")), for
    inference. Random weights: they do not change the speed."""
    model = tensorflow_layers.new_model(tf, "resnet50", output="features")
    stem = tensorflow_layers.conv_bn(tf, model, 7, spec["input_shape"][-1], 64, stride=2)
    blocks, channels = [], 64
    for filters, count, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for index in range(count):
            blocks.append(
                tensorflow_layers.bottleneck(
                    tf, model, channels, filters, stride if index == 0 else 1
                )
            )
            channels = 4 * filters

    def forward(x, training):
        x = tf.nn.relu(stem(tf.pad(x, [[0, 0], [3, 3], [3, 3], [0, 0]])))
        x = tf.nn.max_pool2d(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), 3, 2, "VALID")
        for block in blocks:
            x = block(x)
        return tf.reduce_mean(x, axis=[1, 2])

    model.forward = forward
    return model
