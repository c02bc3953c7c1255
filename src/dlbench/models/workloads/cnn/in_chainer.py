"""cnn in Chainer (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import chainer_layers


def build(chainer, spec):
    dense, conv, F = chainer_layers.layers(chainer)
    channels, height, width = chainer_layers.channels_first_shape(spec)
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return chainer.Sequential(
        conv(channels, 32, 3),
        F.relu,
        conv(32, 64, 3),
        F.relu,
        chainer_layers.pool(F),
        chainer_layers.dropout(F, 0.25),
        dense(flat, 128),  # Linear flattens its input
        F.relu,
        chainer_layers.dropout(F, 0.5),
        dense(128, spec["classes"]),
    )
