"""imdb_gru in CNTK (the workload: ``dlbench.models.workloads.imdb_gru``)."""

from dlbench.models.layers import cntk_layers


def build(C, spec):
    # The GRU's last step feeds the Dense, as Keras' GRU(100).
    return C.layers.Sequential(
        [
            cntk_layers.embedding(C, spec["vocabulary"], 125),
            cntk_layers.gru(C, 100),
            C.sequence.last,
            C.layers.Dense(spec["classes"], activation=None),
        ]
    )
