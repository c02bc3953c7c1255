"""mlp in MXNet Gluon (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import mxnet_layers


def build(mx, spec):
    nn = mx.gluon.nn
    channels, height, width = mxnet_layers.channels_first_shape(spec)
    return mxnet_layers.network(
        mx,
        nn.Flatten(),
        nn.Dense(512, activation="relu", in_units=channels * height * width),
        nn.Dropout(0.2),
        nn.Dense(512, activation="relu", in_units=512),
        nn.Dropout(0.2),
        nn.Dense(spec["classes"], in_units=512),
    )
