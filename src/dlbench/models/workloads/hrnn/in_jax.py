"""hrnn in JAX (the workload: ``dlbench.models.workloads.hrnn``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    """Hierarchical RNN: an LSTM over the pixels of each row (Keras'
    TimeDistributed), a second LSTM over the row encodings."""
    height, width, channels = spec["input_shape"]
    keys = jax.random.split(key, 3)
    params = [
        jax_layers.lstm_init(jax, keys[0], channels, 128),
        jax_layers.lstm_init(jax, keys[1], 128, 128),
        jax_layers.dense(jax, keys[2], 128, spec["classes"]),
    ]

    def forward(params, x, key=None):
        rows = jax_layers.lstm(jax, params[0], x.reshape((-1, width, channels)))
        encoded = jax_layers.lstm(jax, params[1], rows.reshape((x.shape[0], height, -1)))
        return jax_layers.linear(params[2], encoded)

    return params, forward
