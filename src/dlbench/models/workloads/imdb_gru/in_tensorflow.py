"""imdb_gru in TensorFlow (the workload: ``dlbench.models.workloads.imdb_gru``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    model = tensorflow_layers.new_model(tf, "imdb_gru")
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.embedding(tf, model, spec["vocabulary"], 125),
            tensorflow_layers.gru_layer(tf, model, 125, 100),
            tensorflow_layers.dense_layer(tf, model, 100, spec["classes"]),
        ],
    )
