"""cnn in PyTensor (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import pytensor_layers


def build(net, spec):
    channels, height, width = pytensor_layers.channels_first_shape(spec)
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return [
        net.conv(channels, 32, 3, relu=True),
        net.conv(32, 64, 3, relu=True),
        net.max_pool,
        net.dropout(0.25),
        net.flatten,
        net.dense(flat, 128, relu=True),
        net.dropout(0.5),
        net.dense(128, spec["classes"]),
    ]
