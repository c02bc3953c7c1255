"""imdb_gru in JAX (the workload: ``dlbench.models.workloads.imdb_gru``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    keys = jax.random.split(key, 3)
    params = [
        jax_layers.embedding(jax, keys[0], spec["vocabulary"], 125),
        jax_layers.gru_init(jax, keys[1], 125, 100),
        jax_layers.dense(jax, keys[2], 100, spec["classes"]),
    ]

    def forward(params, x, key=None):
        return jax_layers.linear(params[2], jax_layers.gru(jax, params[1], params[0][x]))

    return params, forward
