"""vgg_cifar in CNTK (the workload: ``dlbench.models.workloads.vgg_cifar``)."""

from dlbench.models.layers import cntk_layers


def build(C, spec):
    return C.layers.Sequential(
        [
            C.layers.Convolution2D((3, 3), 50, activation=C.relu, pad=True),
            C.layers.Convolution2D((3, 3), 50, activation=C.relu, pad=True),
            cntk_layers.max_pool(C),
            cntk_layers.dropout(C, 0.25),
            C.layers.Convolution2D((3, 3), 100, activation=C.relu, pad=True),
            C.layers.Convolution2D((3, 3), 100, activation=C.relu, pad=True),
            cntk_layers.max_pool(C),
            cntk_layers.dropout(C, 0.25),
            C.layers.Dense(512, activation=C.relu),
            cntk_layers.dropout(C, 0.5),
            C.layers.Dense(spec["classes"], activation=None),
        ]
    )
