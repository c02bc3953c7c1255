"""Backend adapters, chosen by name. Importable on Python 3.6.

An adapter owns one framework family and exposes the few operations the
harness needs (the contract is ``base.Adapter``)::

    setup(threads, seed, devices, parallel)
                                       pin the framework's threads, seed it;
                                       on devices >= 1 set up data parallelism
                                       as ``parallel`` says (run_spec.data_parallel
                                       plus this process' rank, local_rank and
                                       processes; see dlbench.run.launch)
    versions() -> dict                 framework versions for the record
    applied_settings() -> dict         the settings that ran (jit, kernels)
    build(model, data_spec, hyper) -> model (compiled); data_spec is the
                                       dataset's meta plus its input_shape
    parameter_count(model) -> int
    train_epoch(model, x, y, batch_size) -> {"loss", "accuracy", ["seconds"]}
                                       x, y: this process' share of the epoch;
                                       batch_size: its share of the global batch
    replica_divergence(model) -> float or None
                                       largest weight difference between replicas
    evaluate(model, x, y, batch_size) -> (loss, accuracy)
    predict(model, x) -> outputs      one batch, for inference timing
    training_outputs(model, x, draws) -> outputs
                                       training-mode passes with dropout (the
                                       equivalence check's dropout draws)
    prepare_check(model, hyper) -> dict
                                       what the equivalence check's settings
                                       need beyond the build (where needed)
    synchronize()                      wait for queued device work
    peak_device_memory_mb() -> float or None
    close()                            release what setup took (torchrun's
                                       process group) before the process exits

Adapter modules import their framework only inside ``setup``.
"""

import importlib

from dlbench.registry import BUILT_IN


def adapter_module(entry):
    """The module of a backend's adapter (``entry``: a catalog.Backend):
    ``<adapter>_adapter`` here, found by the name, or the entry's own
    ``adapter_module``."""
    return entry.get("adapter_module") or "{}.{}_adapter".format(__name__, entry.adapter)


def adapter_for(backend, settings, registry=BUILT_IN):
    """The adapter of ``backend`` (one of ``registry``'s), which builds the
    registry's workloads."""
    entry = registry.backends[backend]
    adapter = importlib.import_module(adapter_module(entry)).Adapter(entry["framework"], settings)
    adapter.registry = registry
    return adapter
