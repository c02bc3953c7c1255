"""Keras 2 on CNTK: its device, seed and threads (keras2_adapter; what a
module here provides: keras_on). Importable on Python 3.6."""

from dlbench.run import manifest

# Keras 2.3.1's loop over time on CNTK 2.7 returns an LSTM's cell state
# where its output belongs; unrolled, it agrees with numpy to 4e-8
# (keras2_adapter.Keras2Layers).
UNROLL_RECURRENT = True


def setup(adapter, threads, seed):
    import cntk

    cntk.device.try_set_default_device(cntk.device.cpu())
    cntk.cntk_py.set_fixed_random_seed(seed)
    cntk.cntk_py.set_max_num_cputhreads(threads)
    adapter.applied["cntk_device"] = "cpu"
    adapter.applied["cntk_max_cpu_threads"] = cntk.cntk_py.get_max_num_cputhreads()


def versions(cntk):
    return {}


def read_manifest(adapter, threads):
    return manifest.host_manifest(
        adapter.framework,
        threads,
        "cntk graph (Keras 2)",
        probe=manifest.cntk_probe,
        deterministic=None,
        onednn=True,
    )
