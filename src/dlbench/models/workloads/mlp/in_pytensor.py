"""mlp in PyTensor (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import pytensor_layers


def build(net, spec):
    channels, height, width = pytensor_layers.channels_first_shape(spec)
    return [
        net.flatten,
        net.dense(channels * height * width, 512, relu=True),
        net.dropout(0.2),
        net.dense(512, 512, relu=True),
        net.dropout(0.2),
        net.dense(512, spec["classes"]),
    ]
