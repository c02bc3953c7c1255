"""cifar_cnn in JAX (the workload: ``dlbench.models.workloads.cifar_cnn``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    height, width, channels = spec["input_shape"]
    flat = 64 * (((height - 2) // 2 - 2) // 2) * (((width - 2) // 2 - 2) // 2)
    keys = jax.random.split(key, 6)
    params = [
        jax_layers.conv(jax, keys[0], 3, channels, 32),
        jax_layers.conv(jax, keys[1], 3, 32, 32),
        jax_layers.conv(jax, keys[2], 3, 32, 64),
        jax_layers.conv(jax, keys[3], 3, 64, 64),
        jax_layers.dense(jax, keys[4], flat, 512),
        jax_layers.dense(jax, keys[5], 512, spec["classes"]),
    ]

    def forward(params, x, key=None):
        drop = jax_layers.split_keys(jax, key, 3)
        x = jax.nn.relu(jax_layers.convolve(jax, params[0], x, "SAME"))
        x = jax_layers.max_pool(jax, jax.nn.relu(jax_layers.convolve(jax, params[1], x)))
        x = jax.nn.relu(
            jax_layers.convolve(jax, params[2], jax_layers.dropout(jax, drop[0], x, 0.25), "SAME")
        )
        x = jax_layers.max_pool(jax, jax.nn.relu(jax_layers.convolve(jax, params[3], x)))
        x = jax_layers.flatten(jax_layers.dropout(jax, drop[1], x, 0.25))
        x = jax_layers.dropout(jax, drop[2], jax.nn.relu(jax_layers.linear(params[4], x)), 0.5)
        return jax_layers.linear(params[5], x)

    return params, forward
