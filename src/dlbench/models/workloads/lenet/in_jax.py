"""lenet in JAX (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    """No activation on the convolutions, as in Caffe's LeNet."""
    height, width, channels = spec["input_shape"]
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    keys = jax.random.split(key, 4)
    params = [
        jax_layers.conv(jax, keys[0], 5, channels, 20),
        jax_layers.conv(jax, keys[1], 5, 20, 50),
        jax_layers.dense(jax, keys[2], flat, 500),
        jax_layers.dense(jax, keys[3], 500, spec["classes"]),
    ]

    def forward(params, x, key=None):
        x = jax_layers.max_pool(jax, jax_layers.convolve(jax, params[0], x))
        x = jax_layers.max_pool(jax, jax_layers.convolve(jax, params[1], x))
        x = jax.nn.relu(jax_layers.linear(params[2], jax_layers.flatten(x)))
        return jax_layers.linear(params[3], x)

    return params, forward
