"""The run spec: what one run is handed, defined once.

The workflow builds it (dlbench.plan.run_spec), writes it as JSON into the
run's Snakemake params (Snakemake re-runs a cell whose params changed) and
hands it to the supervisor and the harness (``--spec JSON``), which read it
back with ``RunSpec.from_json`` once, at their entry, and pass the RunSpec
on. ``as_json`` gives the JSON's dict back key for key, in the order the
workflow has always written it, so that a spec that did not change never
re-runs a cell.

Imported by the harness in the backend's environment: Python 3.6, no
dataclasses (typing.NamedTuple with defaults needs 3.6.1).
"""

from typing import Any, Dict, NamedTuple, Optional, Tuple, Union

from dlbench.record.fields import TRAIN

# The equivalence check's task (dlbench.run.equivalence), beside fields.TRAIN and INFER.
CHECK = "check"


class RunSpec(NamedTuple):
    """One run: its cell (machine, workload, backend, the matrix's
    dimensions), its repeat and seed, and everything else that changes what
    it measures.

    ``hyper`` and ``parallel`` stay dicts (their keys are listed at each):
    they are the workload's hyper-parameters and the data-parallel block as
    the config and the catalog give them, written into the record as they
    are. Change a spec with ``_replace``: a check run is
    ``spec._replace(task="check", check_steps=steps)``.
    """

    # The workload's prepared dataset (catalog.DATASETS, or a synthetic one).
    dataset: str
    # The workload's model (a built-in workload's folder, or a model of the user's).
    model: str
    # The backend that runs it (catalog.BACKENDS, or a test's own).
    backend: str
    # The seed of the run's data order and framework: the config's seed + repeat - 1,
    # the same for every backend of a repeat.
    seed: int
    # The workload's hyper-parameters (plan.run_spec.data_parallel): batch_size
    # (samples a global step), epochs, loss, optimizer ({name, learning_rate, ...}),
    # train_samples and validation_split (a fraction) where set; an inference
    # workload's warmup, latency_samples and throughput_batches (calls).
    hyper: Dict[str, Any]
    # The machine the cell belongs to (matrix.machine_name); None outside the matrix.
    machine: Optional[str] = None
    # The matrix's dimensions (matrix.DIMENSIONS; a test keeps them equal), each
    # with its default:
    # devices: 0 for the CPU, N >= 1 for N GPUs or N emulated devices (a count).
    devices: int = 0
    # threads: CPU threads of the run (a count), or "all" the CPUs it may use.
    threads: Union[int, str] = "all"
    # precision: the compute precision (catalog.PRECISIONS).
    precision: str = "float32"
    # compile: the backend's compile mode (catalog.COMPILE_MODES).
    compile: str = "auto"
    # versions: the environment's version variant ("pinned": its env file's).
    versions: str = "pinned"
    # The dimensions the record carries, by name, in matrix.DIMENSION_NAMES' order.
    dimensions: Tuple[str, ...] = ("devices",)
    # The repeat of the cell, from 1.
    repeat: int = 1
    # What the run does: fields.TRAIN, fields.INFER or CHECK (the equivalence check's steps).
    task: str = TRAIN
    # Whether training validates after every epoch (else after the last only).
    validate_every_epoch: bool = True
    # The data-parallel block (plan.run_spec.data_parallel): devices, accelerator
    # (cpu, gpu, emulated-cpu), replicas, launch (launch.LAUNCHERS), method,
    # global_batch and per_device_batch (samples), learning_rate, batch_scaling,
    # batch_rule; the supervisor adds gpu_ids and gpus_assigned_by.
    # None: one process on the CPU (launch.ON_THE_CPU).
    parallel: Optional[Dict[str, Any]] = None
    # The environment the run executes in (keras-jax, keras-jax.cuda,
    # keras-jax@jax-0.9.2); None: the backend's name.
    environment: Optional[str] = None
    # The backend's settings under the compile mode's (the adapter's; None: none).
    backend_settings: Optional[Dict[str, Any]] = None
    # Whether the run profiles its ops over a window after the clocks (ops.json).
    op_profile: bool = False
    # The optional blocks, absent from the JSON where None:
    # a model of the user's: its file, builder and sha256 (Registry.of_run reads it).
    custom_model: Optional[Dict[str, Any]] = None
    # The shared initial weights' file (.npz) the run loads before its clock.
    initial_weights: Optional[str] = None
    # A check run's optimizer steps (a count).
    check_steps: Optional[int] = None
    # How the run's environment came to be (the supervisor's environment_check).
    environment_check: Optional[Dict[str, Any]] = None
    # Optimizer steps between a training run's evaluations on the held-out data,
    # off the clock, where its workload measures time to accuracy (a count).
    evaluate_every: Optional[int] = None

    @classmethod
    def from_json(cls, found: Dict[str, Any]) -> "RunSpec":
        """The RunSpec of a spec's JSON (a dict), refusing a key it does not
        know and a missing one it needs, by name."""
        if not isinstance(found, dict):
            raise TypeError("a run spec is a JSON object, not {}".format(type(found).__name__))
        unknown = sorted(set(found) - set(cls._fields))
        if unknown:
            raise ValueError(
                "run spec: unknown key(s) {}; a run spec holds {}".format(
                    ", ".join(unknown), ", ".join(JSON_ORDER)
                )
            )
        missing = [name for name in cls._fields if name not in cls._field_defaults]
        missing = [name for name in missing if name not in found]
        if missing:
            raise ValueError("run spec: missing key(s) {}".format(", ".join(missing)))
        values = dict(found)
        if "dimensions" in values:
            values["dimensions"] = tuple(values["dimensions"])
            not_fields = [name for name in values["dimensions"] if name not in cls._fields]
            if not_fields:
                raise ValueError("run spec: unknown dimension(s) {}".format(", ".join(not_fields)))
        return cls(**values)

    def as_json(self) -> Dict[str, Any]:
        """The spec's JSON (a dict) as the workflow writes it: every field in
        ``JSON_ORDER``, the optional blocks only where set."""
        found = {}
        for name in JSON_ORDER:
            value = getattr(self, name)
            if value is None and name in OPTIONAL_BLOCKS:
                continue
            found[name] = list(value) if name == "dimensions" else value
        return found


# The order of the JSON's keys: that in which the workflow has always
# written them (a spec's JSON must not change while the run it describes did not).
JSON_ORDER = (
    "machine",
    "dataset",
    "model",
    "backend",
    "devices",
    "threads",
    "precision",
    "compile",
    "versions",
    "dimensions",
    "repeat",
    "task",
    "seed",
    "validate_every_epoch",
    "hyper",
    "parallel",
    "environment",
    "backend_settings",
    "op_profile",
    "custom_model",
    "initial_weights",
    "check_steps",
    "environment_check",
    "evaluate_every",
)
# The fields a spec's JSON holds only where they are set.
OPTIONAL_BLOCKS = (
    "custom_model",
    "initial_weights",
    "check_steps",
    "environment_check",
    "evaluate_every",
)
