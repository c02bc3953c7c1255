"""The backends as the matrix reads them: each definition as a mapping, with
the reasons it has no cell for a task, a device count, a precision or a
compilation mode; the environment a run of it uses; the Keras and native
pairs of the cost of abstraction."""

from collections.abc import Mapping
from types import MappingProxyType

from dlbench.catalog.backend_definitions import BACKEND_DEFINITIONS, TASK_WORDS
from dlbench.catalog.precisions import COMPILE_AUTO, FLOAT32, NO_TF32, TF32, TF32_MODES
from dlbench.host import cpu_isa


class Backend(Mapping):
    """One backend: its definition (read as a mapping, as
    dlbench.catalog.backend_definitions writes it) and
    the reasons it has no cell for a task, a device count, a precision or a
    compilation mode."""

    def __init__(self, name, definition):
        self.name = name
        self._definition = dict(definition)

    def __getitem__(self, key):
        return self._definition[key]

    def __iter__(self):
        return iter(self._definition)

    def __len__(self):
        return len(self._definition)

    def __repr__(self):
        return "Backend({!r})".format(self.name)

    @property
    def adapter(self):
        """The adapter's name (dlbench.run.backends.<adapter>_adapter)."""
        return self.get("adapter", self["family"])

    def task_not_applicable(self, task):
        """Why the backend does not run ``task`` at all, or None."""
        if task in self["tasks"]:
            return None
        return "n/a ({} only)".format(" and ".join(TASK_WORDS[t] for t in self["tasks"]))

    def devices_not_applicable(self, task, devices, accelerator):
        """Why the backend cannot run ``task`` on ``devices`` (GPUs, or CPU
        devices emulating them), or None."""
        if "gpu_only" in self and (not devices or accelerator != "gpu"):
            return "n/a ({})".format(self["gpu_only"])
        if not devices:
            return None
        if task == "infer":
            if devices > 1:
                return "n/a (inference is timed on one device)"
            if accelerator == "emulated-cpu":
                return "n/a (emulated devices exercise data-parallel training only)"
        elif "unsupported" in self["data_parallel"]:
            return "n/a ({})".format(self["data_parallel"]["unsupported"])
        if accelerator == "gpu" and not self["gpu_build"]:
            return "n/a (no NVIDIA GPU build)"
        return None

    def precision_not_applicable(self, precision):
        """Why the backend has no mode for ``precision``, or None."""
        if precision == TF32:
            if self.name in TF32_MODES:
                return None
            return "n/a ({}: {})".format(precision, NO_TF32.format(self["framework"]))
        if precision == FLOAT32 or precision in self.get("precision", {}):
            return None
        return "n/a ({}: {})".format(precision, self["precision_note"])

    def precision_cpu_not_applicable(self, precision, flags=None, environ=None):
        """Why this CPU (its ``flags`` and oneDNN cap, this machine's by
        default) cannot run the backend in ``precision``, or None."""
        needed = self.get("precision_cpu_level", {}).get(precision)
        reason = needed and cpu_isa.missing(needed, flags, environ)
        if not reason:
            return None
        return "n/a on this CPU ({} on {} {})".format(precision, self["framework"], reason)

    def compile_not_applicable(self, mode):
        """Why the backend has no ``mode`` of compilation, or None."""
        if mode == COMPILE_AUTO or mode in self["compile"]:
            return None
        return "n/a ({}: {})".format(mode, self["compile_note"])

    def compile_settings(self, mode):
        """The backend settings that make ``mode`` (nothing for auto: the
        config's own, measured choice)."""
        if mode == COMPILE_AUTO:
            return {}
        return dict(self["compile"][mode])

    def environment(self, devices, accelerator):
        """The environment a run uses: envs/<backend>.yaml on the CPU (and for
        emulated devices), envs/<backend>.cuda.yaml on GPUs."""
        if devices and accelerator == "gpu" and self["gpu_build"]:
            return self.name + ".cuda"
        return self.name


BACKENDS = MappingProxyType(
    {name: Backend(name, entry) for name, entry in BACKEND_DEFINITIONS.items()}
)


def keras_native_pairs(backends):
    """(Keras backend, native backend) for every native backend whose Keras
    counterpart is also among ``backends``: the cost of abstraction's pairs."""
    found = []
    for backend in backends:
        counterpart = BACKENDS[backend].get("keras")
        if backend.startswith("native-") and counterpart in backends:
            found.append((counterpart, backend))
    return sorted(found)


def backend_of_environment(environment):
    """``keras-torch.cuda`` -> ``keras-torch``."""
    return environment[: -len(".cuda")] if environment.endswith(".cuda") else environment
