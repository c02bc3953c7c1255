"""mlp in TensorFlow (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import tensorflow_layers


def build(tf, spec):
    model = tensorflow_layers.new_model(tf, "mlp")
    return tensorflow_layers.sequential(
        model,
        [
            tensorflow_layers.flatten(tf),
            tensorflow_layers.dense_layer(
                tf, model, tensorflow_layers.flat_size(spec["input_shape"]), 512, tf.nn.relu
            ),
            tensorflow_layers.dropout(tf, 0.2),
            tensorflow_layers.dense_layer(tf, model, 512, 512, tf.nn.relu),
            tensorflow_layers.dropout(tf, 0.2),
            tensorflow_layers.dense_layer(tf, model, 512, spec["classes"]),
        ],
    )
