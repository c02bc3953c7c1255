"""Keras 2 on MXNet (keras-mxnet): its engine and seed, its contexts (one
executor per device, its own data parallelism), its asynchronous engine and
its two symbols of every tensor (keras2_adapter; what a module here
provides: keras_on). Importable on Python 3.6."""

import contextlib
import os

from dlbench.run import manifest
from dlbench.run.backends import frameworks

# keras-mxnet 2.2.4.3's loop over time on MXNet 1.9 (mx.sym.contrib.foreach)
# returns zeros; unrolled, it agrees with numpy to 4e-8
# (keras2_adapter.Keras2Layers).
UNROLL_RECURRENT = True

# keras-mxnet's optimizers are MXNet's (RMSProp: epsilon under the root), not
# Keras 2's (keras2_adapter.OWN_RULES).
KERAS2_OPTIMIZERS = False


def setup(adapter, threads, seed):
    import mxnet

    mxnet.random.seed(seed)
    adapter.applied["mxnet_engine"] = os.environ.get(
        "MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice (default)"
    )
    adapter.applied["omp_threads"] = os.environ.get("OMP_NUM_THREADS")


def versions(mxnet):
    return {}


def read_manifest(adapter, threads):
    return manifest.host_manifest(
        adapter.framework,
        threads,
        "mxnet graph (Keras 2)",
        probe=manifest.mxnet_probe,
        deterministic=os.environ.get("MXNET_ENFORCE_DETERMINISM", "0") == "1",
        onednn=True,
    )


def distribute(adapter, devices):
    """keras-mxnet's own data parallelism: compile(context=[...]) gives
    MXNet's Module one executor per device; each batch is split over
    them and the gradients summed. Emulated devices are executors on the
    CPU (keras-mxnet maps every 'cpu(i)' to cpu(0))."""
    import mxnet

    if adapter.emulated:
        adapter.mxnet_context = ["cpu({})".format(i) for i in range(devices)]
    else:
        found = mxnet.context.num_gpus()
        if found < devices:
            raise frameworks.no_gpus(
                adapter.framework, devices, "{} GPU(s)".format(found) if found else None
            )
        adapter.mxnet_context = ["gpu({})".format(i) for i in range(devices)]


def one_device(adapter):
    """keras-mxnet on one device: its context names that device (a context
    of one is keras-mxnet's single-device program)."""
    distribute(adapter, 1)


def compile_settings(adapter):
    """Without a context keras-mxnet takes the first GPU nvidia-smi lists,
    whatever CUDA_VISIBLE_DEVICES says: the devices, named (the CPU when
    there are none). Inference compiles too, for the context only."""
    context = getattr(adapter, "mxnet_context", None) or ["cpu"]
    adapter.applied["mxnet_context"] = context
    return {"context": context}


@contextlib.contextmanager
def training_phase(adapter):
    """keras-mxnet keeps a training and a test symbol of each tensor and
    hands out the one of the global phase (0: no dropout), whatever phase
    the function is fed: the global phase is 1 meanwhile. Its function
    binds without gradients, where MXNet's oneDNN subgraph pass (measured)
    removes Dropout; fit's executor, with gradients, has none."""
    K = adapter.keras.backend
    phase = K.learning_phase()
    subgraphs = os.environ.get("MXNET_SUBGRAPH_BACKEND")
    K.set_learning_phase(1)
    os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
    try:
        yield
    finally:
        K.set_learning_phase(phase)
        if subgraphs is None:
            os.environ.pop("MXNET_SUBGRAPH_BACKEND")
        else:
            os.environ["MXNET_SUBGRAPH_BACKEND"] = subgraphs


def synchronize(adapter):
    import mxnet

    mxnet.nd.waitall()  # its engine runs operators asynchronously


def replica_divergence(adapter, model):
    """MXNet keeps one copy of every weight per executor; None with one."""
    if len(getattr(adapter, "mxnet_context", [])) < 2:
        return None
    module = model._module
    group = getattr(module, "_curr_module", module)._exec_group
    largest = 0.0
    for copies in group.param_arrays:
        first = copies[0].asnumpy()
        for copy in copies[1:]:
            largest = max(largest, float(abs(copy.asnumpy() - first).max()))
    return largest
