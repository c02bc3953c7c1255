"""cnn in CNTK (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import cntk_layers


def build(C, spec):
    return C.layers.Sequential(
        [
            C.layers.Convolution2D((3, 3), 32, activation=C.relu, pad=False),
            C.layers.Convolution2D((3, 3), 64, activation=C.relu, pad=False),
            cntk_layers.max_pool(C),
            cntk_layers.dropout(C, 0.25),
            C.layers.Dense(128, activation=C.relu),
            cntk_layers.dropout(C, 0.5),
            C.layers.Dense(spec["classes"], activation=None),
        ]
    )
