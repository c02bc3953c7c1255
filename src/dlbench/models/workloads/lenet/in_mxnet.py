"""lenet in MXNet Gluon (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import mxnet_layers


def build(mx, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    nn = mx.gluon.nn
    channels, height, width = mxnet_layers.channels_first_shape(spec)
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return mxnet_layers.network(
        mx,
        nn.Conv2D(20, 5, in_channels=channels),
        nn.MaxPool2D(2),
        nn.Conv2D(50, 5, in_channels=20),
        nn.MaxPool2D(2),
        nn.Flatten(),
        nn.Dense(500, activation="relu", in_units=flat),
        nn.Dense(spec["classes"], in_units=500),
    )
