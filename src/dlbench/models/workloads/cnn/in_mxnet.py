"""cnn in MXNet Gluon (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import mxnet_layers


def build(mx, spec):
    nn = mx.gluon.nn
    channels, height, width = mxnet_layers.channels_first_shape(spec)
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return mxnet_layers.network(
        mx,
        nn.Conv2D(32, 3, activation="relu", in_channels=channels),
        nn.Conv2D(64, 3, activation="relu", in_channels=32),
        nn.MaxPool2D(2),
        nn.Dropout(0.25),
        nn.Flatten(),
        nn.Dense(128, activation="relu", in_units=flat),
        nn.Dropout(0.5),
        nn.Dense(spec["classes"], in_units=128),
    )
