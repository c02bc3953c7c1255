"""Data parallelism of the Keras adapter (keras_adapter), the way each
backend's documentation does it: each framework's ``distribute`` and
``one_device`` in its module of keras_on (Keras' DataParallel distribution
on JAX, a MirroredStrategy on TensorFlow, DistributedDataParallel in one
process per device on torch, started by torchrun, see dlbench.run.launch;
keras-mxnet's contexts), what they share here. Importable on Python 3.6."""


class KerasDataParallel(object):
    """The Keras adapter's devices: its ``setup`` calls these."""

    def _one_device(self):
        """One device: Keras' own placement (the GPU), no distribution; a
        GPU run that would find none fails rather than run on the CPU (the
        framework's ``one_device``, where it has one)."""
        one_device = getattr(self.on, "one_device", None)
        if one_device is not None:
            one_device(self)

    def _describe_parallel(self, devices):
        described = {
            "devices": devices,
            "accelerator": self.parallel["accelerator"],
            "method": self.parallel.get("method"),
            "processes": self.parallel.get("processes", 1),
        }
        if self.step_sync:
            described["step_sync"] = "every step's loss read (emulated XLA CPU devices)"
        return described

    def _scope(self):
        """Where models are built and trained: under the distribution."""
        if self.distribution is not None:
            return self.distribution.scope()
        if self.strategy is not None:
            return self.strategy.scope()
        return _Nothing()


class _Nothing(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
