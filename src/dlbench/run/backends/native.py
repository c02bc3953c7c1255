"""What the native adapters share: their bookkeeping, the batches of an
epoch, and the config's optimizer settings mapped onto a framework's own
optimizer arguments. Importable on Python 3.6.

A native adapter implements the interface of ``dlbench.run.backends`` with its
framework's own API and no Keras; models live in
``dlbench/models/workloads/<model>/in_<family>.py`` with Keras' layers, parameter counts
and initial weight distributions (Glorot-uniform kernels, orthogonal
recurrent kernels, zero biases).
"""

import time
from typing import Optional

from dlbench import catalog
from dlbench.run import launch
from dlbench.run.backends.base import Adapter


class NativeAdapter(Adapter):
    """Bookkeeping every native adapter needs; subclasses set ``backend``."""

    backend: Optional[str] = None

    def _start(self, threads, devices, parallel, distributes=False):
        """Record the run's threads, keep its parallel block; refuse devices
        this adapter cannot drive. Returns whether the devices are emulated
        on the CPU."""
        self.applied["threads"] = threads
        self.parallel = dict(launch.ON_THE_CPU, **(parallel or {}))
        if devices and not distributes:
            raise NotImplementedError(
                "devices={}: {} runs on the CPU only".format(devices, self.backend)
            )
        return bool(devices) and self.parallel["accelerator"] == "emulated-cpu"

    def _describe_parallel(self, devices, **extra):
        described = {
            "devices": devices,
            "accelerator": self.parallel["accelerator"],
            "method": self.parallel.get("method"),
            "processes": self.parallel.get("processes", 1),
        }
        described.update(extra)
        return described

    # The dtype a mixed-precision forward pass computed in, seen when it was
    # traced (native JAX and TensorFlow); None where nobody traced one.
    computed_dtype: Optional[str] = None

    def _precision_applied(self, precision, scheme=None, variable_dtype="float32"):
        """What the run's mixed precision is, for ``settings``; the scheme is
        the catalog's description of the backend's mode unless given."""
        self.applied["precision"] = {
            "asked": precision,
            "scheme": scheme or catalog.BACKENDS[self.backend]["precision"][precision],
            "variable_dtype": variable_dtype,
        }

    def applied_settings(self):
        found = Adapter.applied_settings(self)
        if "precision" in found and self.computed_dtype:
            found["precision"] = dict(found["precision"], compute_dtype=self.computed_dtype)
        return found

    def _time_first_step(self, start, wait=None):
        """Called after each training step of an epoch begun at ``start``:
        the run's first step is timed, its device work waited for (``wait``);
        every later step costs a comparison."""
        if self.first_step_seconds is None:
            if wait is not None:
                wait()
            self.first_step_seconds = time.perf_counter() - start


def batches(n, batch_size):
    """The slices of an epoch of ``n`` samples in batches of ``batch_size``
    (the last one shorter), in the order the harness gave the samples."""
    return [slice(start, min(start + batch_size, n)) for start in range(0, n, batch_size)]


def channels_first(x, y=None):
    """Images as the frameworks that take NCHW want them: a contiguous
    channels-first copy, and the class indices (int32) of one-hot labels."""
    import numpy

    inputs = numpy.ascontiguousarray(x.transpose(0, 3, 1, 2))
    if y is None:
        return inputs
    return inputs, y.argmax(axis=1).astype("int32")


def optimizer_arguments(settings, renames):
    """The config's optimizer ``settings`` (Keras' names) as keyword
    arguments of a framework's optimizer: ``renames`` maps each Keras
    setting to the framework's name for it (None: no argument, the caller
    handles it). A setting without an equivalent is an error, never
    silently dropped. ``learning_rate`` and ``decay`` stay under their names."""
    kwargs = {}
    for key, value in settings.items():
        if key in ("name", "learning_rate", "decay"):
            continue
        if key not in renames:
            raise ValueError(
                "optimizer {}: no equivalent for {!r} in this framework".format(
                    settings["name"], key
                )
            )
        if renames[key]:
            kwargs[renames[key]] = value
    return kwargs


def learning_rate(settings, step):
    """The learning rate at ``step`` (counted from 0): Keras 2's ``decay``
    divides it by 1 + decay x step (the Keras adapter's InverseTimeDecay)."""
    return settings["learning_rate"] / (1.0 + settings.get("decay", 0.0) * step)
