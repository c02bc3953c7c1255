"""mlp in CNTK (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import cntk_layers


def build(C, spec):
    # CNTK's Dense reduces every axis of its input: Keras' Flatten + Dense.
    return C.layers.Sequential(
        [
            C.layers.Dense(512, activation=C.relu),
            cntk_layers.dropout(C, 0.2),
            C.layers.Dense(512, activation=C.relu),
            cntk_layers.dropout(C, 0.2),
            C.layers.Dense(spec["classes"], activation=None),
        ]
    )
