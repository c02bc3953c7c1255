"""Keras 3 on JAX: its threads and compilation cache, Keras' DataParallel
distribution on devices >= 2, its hidden settings (keras_adapter; what a
module here provides: keras_on). Importable on Python 3.6."""

from dlbench.run import compiles, launch, manifest
from dlbench.run.backends import frameworks


def setup(adapter, threads, seed):
    manifest.prepare_jax(adapter.requested)
    emulated = launch.emulated_devices(adapter.parallel)
    adapter.applied.update(frameworks.pin_jax(threads, emulated))
    adapter.applied.update(
        frameworks.jax_compilation_cache(adapter.requested.get("compilation_cache", False))
    )
    adapter.compile_counter = compiles.jax_counter()


def versions(jax):
    import jaxlib

    return {"jaxlib": jaxlib.__version__, "jax_platform": jax.default_backend()}


def set_hidden_settings(adapter):
    import jax

    manifest.set_jax(jax, adapter.precision)


def read_manifest(adapter, threads):
    import jax

    # Keras on JAX compiles every step, whatever jit_compile says.
    return manifest.jax_manifest(jax, adapter.on_gpu, "jax.jit (XLA) (Keras jit_compile)")


def one_device(adapter):
    """Keras' own placement on the GPU; a GPU run that finds none fails."""
    if adapter.emulated:
        return
    import jax

    frameworks.jax_devices(jax, adapter.framework, 1, False)


def distribute(adapter, devices):
    """Keras' DataParallel distribution over the devices (models are built
    and trained in its scope: keras_parallel)."""
    import jax

    found = frameworks.jax_devices(jax, adapter.framework, devices, adapter.emulated)
    adapter.distribution = adapter.keras.distribution.DataParallel(devices=found)
    # Emulated CPU devices: XLA's CPU all-reduce gives up when one device
    # runs ahead ("only 1 of them arrived on time"); waiting for every
    # step's result keeps them together. Real GPUs need no such wait.
    adapter.step_sync = adapter.emulated


def replica_divergence(adapter, model):
    """The largest difference between a weight's shards on the devices;
    None without a distribution."""
    if adapter.distribution is None:
        return None
    largest = 0.0
    for variable in model.variables:
        copies = [shard.data for shard in variable.value.addressable_shards]
        largest = max(largest, frameworks.largest_difference(copies))
    return largest


def recurrent_kernel(name, devices):
    """JAX has a cuDNN LSTM (jax.experimental.rnn) but no cuDNN GRU: its GRU
    is one lax.scan (Keras 3.15)."""
    if name == "gru":
        return "Keras' JAX GRU: one lax.scan, input projections precomputed (JAX has no cuDNN GRU)"
    return "cuDNN's LSTM through jax.experimental.rnn"
