"""lenet in Chainer (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import chainer_layers


def build(chainer, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    dense, conv, F = chainer_layers.layers(chainer)
    channels, height, width = chainer_layers.channels_first_shape(spec)
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return chainer.Sequential(
        conv(channels, 20, 5),
        chainer_layers.pool(F),
        conv(20, 50, 5),
        chainer_layers.pool(F),
        dense(flat, 500),
        F.relu,
        dense(500, spec["classes"]),
    )
