"""lenet in PyTensor (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import pytensor_layers


def build(net, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    channels, height, width = pytensor_layers.channels_first_shape(spec)
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return [
        net.conv(channels, 20, 5),
        net.max_pool,
        net.conv(20, 50, 5),
        net.max_pool,
        net.flatten,
        net.dense(flat, 500, relu=True),
        net.dense(500, spec["classes"]),
    ]
