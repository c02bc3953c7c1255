"""mlp in CNTK (the workload: ``dlbench.workloads.mlp``)."""


def build(C, spec):
    # CNTK's Dense reduces every axis of its input: Keras' Flatten + Dense.
    return C.layers.Sequential(
        [
            C.layers.Dense(512, activation=C.relu),
            C.layers.Dropout(0.2),
            C.layers.Dense(512, activation=C.relu),
            C.layers.Dropout(0.2),
            C.layers.Dense(spec["classes"], activation=None),
        ]
    )
