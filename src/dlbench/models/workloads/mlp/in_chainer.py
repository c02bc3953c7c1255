"""mlp in Chainer (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import chainer_layers


def build(chainer, spec):
    dense, _, F = chainer_layers.layers(chainer)
    channels, height, width = chainer_layers.channels_first_shape(spec)
    return chainer.Sequential(
        dense(channels * height * width, 512),
        F.relu,
        chainer_layers.dropout(F, 0.2),
        dense(512, 512),
        F.relu,
        chainer_layers.dropout(F, 0.2),
        dense(512, spec["classes"]),
    )
