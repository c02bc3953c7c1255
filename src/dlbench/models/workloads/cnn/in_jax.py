"""cnn in JAX (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    height, width, channels = spec["input_shape"]
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    keys = jax.random.split(key, 4)
    params = [
        jax_layers.conv(jax, keys[0], 3, channels, 32),
        jax_layers.conv(jax, keys[1], 3, 32, 64),
        jax_layers.dense(jax, keys[2], flat, 128),
        jax_layers.dense(jax, keys[3], 128, spec["classes"]),
    ]

    def forward(params, x, key=None):
        drop = jax_layers.split_keys(jax, key, 2)
        x = jax.nn.relu(jax_layers.convolve(jax, params[0], x))
        x = jax_layers.max_pool(jax, jax.nn.relu(jax_layers.convolve(jax, params[1], x)))
        x = jax_layers.flatten(jax_layers.dropout(jax, drop[0], x, 0.25))
        x = jax_layers.dropout(jax, drop[1], jax.nn.relu(jax_layers.linear(params[2], x)), 0.5)
        return jax_layers.linear(params[3], x)

    return params, forward
