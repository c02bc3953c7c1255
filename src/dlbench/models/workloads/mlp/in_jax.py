"""mlp in JAX (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    height, width, channels = spec["input_shape"]
    keys = jax.random.split(key, 3)
    params = [
        jax_layers.dense(jax, keys[0], height * width * channels, 512),
        jax_layers.dense(jax, keys[1], 512, 512),
        jax_layers.dense(jax, keys[2], 512, spec["classes"]),
    ]

    def forward(params, x, key=None):
        drop = jax_layers.split_keys(jax, key, 2)
        x = jax_layers.dropout(
            jax, drop[0], jax.nn.relu(jax_layers.linear(params[0], jax_layers.flatten(x))), 0.2
        )
        x = jax_layers.dropout(jax, drop[1], jax.nn.relu(jax_layers.linear(params[1], x)), 0.2)
        return jax_layers.linear(params[2], x)

    return params, forward
