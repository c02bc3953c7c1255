"""deep_mnist in JAX (the workload: ``dlbench.models.workloads.deep_mnist``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    height, width, channels = spec["input_shape"]
    flat = 64 * (height // 4) * (width // 4)
    keys = jax.random.split(key, 4)
    params = [
        jax_layers.conv(jax, keys[0], 5, channels, 32),
        jax_layers.conv(jax, keys[1], 5, 32, 64),
        jax_layers.dense(jax, keys[2], flat, 1024),
        jax_layers.dense(jax, keys[3], 1024, spec["classes"]),
    ]

    def forward(params, x, key=None):
        (drop,) = jax_layers.split_keys(jax, key, 1)
        x = jax_layers.max_pool(jax, jax.nn.relu(jax_layers.convolve(jax, params[0], x, "SAME")))
        x = jax_layers.max_pool(jax, jax.nn.relu(jax_layers.convolve(jax, params[1], x, "SAME")))
        x = jax.nn.relu(jax_layers.linear(params[2], jax_layers.flatten(x)))
        return jax_layers.linear(params[3], jax_layers.dropout(jax, drop, x, 0.5))

    return params, forward
