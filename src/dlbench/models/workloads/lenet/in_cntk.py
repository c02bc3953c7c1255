"""lenet in CNTK (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import cntk_layers


def build(C, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    return C.layers.Sequential(
        [
            C.layers.Convolution2D((5, 5), 20, activation=None, pad=False),
            cntk_layers.max_pool(C),
            C.layers.Convolution2D((5, 5), 50, activation=None, pad=False),
            cntk_layers.max_pool(C),
            C.layers.Dense(500, activation=C.relu),
            C.layers.Dense(spec["classes"], activation=None),
        ]
    )
