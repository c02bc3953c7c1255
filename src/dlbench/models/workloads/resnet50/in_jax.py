"""resnet50 in JAX (the workload: ``dlbench.models.workloads.resnet50``)."""

from dlbench.models.layers import jax_layers


def build(jax, spec, key):
    """ResNet-50 as keras.applications.ResNet50(include_top=False,
    pooling="avg"): 2048 features. Inference only: batch norm uses its
    moving statistics. Random weights: they do not change the speed."""
    height, width, channels = spec["input_shape"]
    stages = ((64, 3), (128, 4), (256, 6), (512, 3))
    keys = iter(jax.random.split(key, 1 + sum(blocks for _, blocks in stages)))
    params = {
        "conv1": jax_layers.conv(jax, next(keys), 7, channels, 64),
        "bn1": jax_layers.batch_norm_init(jax, 64),
    }
    params["stages"], n_in = [], 64
    for filters, blocks in stages:
        stage = []
        for index in range(blocks):
            stage.append(jax_layers.bottleneck_init(jax, next(keys), n_in, filters, index == 0))
            n_in = 4 * filters
        params["stages"].append(stage)

    def forward(params, x, key=None):
        jnp = jax.numpy
        x = jax_layers.convolve(jax, params["conv1"], x, ((3, 3), (3, 3)), 2)  # ZeroPadding2D(3)
        x = jax.nn.relu(jax_layers.batch_norm(jax, params["bn1"], x))
        x = jax_layers.max_pool(jax, jnp.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))), 3, 2)
        for number, stage in enumerate(params["stages"]):
            for index, block in enumerate(stage):
                x = jax_layers.bottleneck(jax, block, x, 2 if number and not index else 1)
        return x.mean(axis=(1, 2))

    return params, forward
