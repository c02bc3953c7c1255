"""The benchmark matrix: its dimensions, and the runs and n/a cells a config
expands to.

Experiments are a product of variables: a workload (dataset, model) and a
backend, crossed with every value of each dimension (``DIMENSIONS``: device
count, CPU threads), repeated. A cell is all of that but the repeat, on a
machine: the machine the workflow runs on (``machine_name``), or one whose
results were imported. The workflow expands the matrix from here; the tests
check it directly.
"""

import itertools
import platform
import re
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    NamedTuple,
    Optional,
    Tuple,
    Union,
)

from dlbench import catalog
from dlbench.environments import variants
from dlbench.plan import config_registry
from dlbench.plan.config_sources import Config
from dlbench.record.contract import Record
from dlbench.registry import BUILT_IN

if TYPE_CHECKING:
    import pandas

# A dimension of the matrix: its name is its config key (a value or a list of
# values, each a cell of its own), its wildcard, its record field and its
# table column. ``parse`` reads a value back from a path or the command line;
# ``not_applicable(config, backend, task, point)`` says why a backend has no
# cell at the point (one value of each dimension; None: it has one); ``label`` is
# how tables name a value.
# ``values(config, entry)``, where given, lists the dimension's values from
# a config key of another form (versions: variants by backend).
# A config's workload entry, and one value of each dimension by name.
Entry = Dict[str, Any]
Point = Dict[str, Any]


class Dimension(NamedTuple):
    name: str
    pattern: str
    parse: Callable[[Any], Any]
    default: Any
    label: Optional[str]
    not_applicable: Optional[Callable[[Config, str, str, Point], Optional[str]]]
    values: Optional[Callable[[Config, Optional[Entry]], List[Any]]] = None


def _threads_value(text):
    return "all" if str(text) == "all" else int(text)


def _devices_not_applicable(config, backend, task, point):
    return catalog.BACKENDS[backend].devices_not_applicable(
        task, point["devices"], option(config, "accelerator")
    )


def _precision_not_applicable(config, backend, task, point):
    """No mode for the precision, or (computed on this CPU) no kernels for it here."""
    precision = point["precision"]
    reason = catalog.BACKENDS[backend].precision_not_applicable(precision)
    if reason is None and on_the_cpu(config, point):
        reason = catalog.BACKENDS[backend].precision_cpu_not_applicable(precision)
    return reason


def _compile_not_applicable(config, backend, task, point):
    return catalog.BACKENDS[backend].compile_not_applicable(point["compile"])


def _versions_not_applicable(config, backend, task, point):
    if owns_version(config, backend, point["versions"]):
        return None
    return "{} is not a version variant of {}".format(point["versions"], backend)


def owns_version(config: Config, backend: str, version: str) -> bool:
    """Whether ``version`` is the backend's: its pinned env file, or one of
    its variants in the config's ``versions``."""
    return version in variants.variants_of(config, backend)


def _versions_values(config, entry):
    """The workload's own list where it names one, else pinned and every
    variant of the workload's backends in the config."""
    if entry is not None and "versions" in entry:
        return list(entry["versions"])
    found = [variants.PINNED]
    backends = workload_backends(config, entry) if entry is not None else config["backends"]
    for backend in backends:
        for name in variants.variants_of(config, backend):
            if name not in found:
                found.append(name)
    return found


def on_the_cpu(config: Config, point: Point) -> bool:
    """Whether a cell at ``point`` computes on this machine's CPU."""
    return not point["devices"] or option(config, "accelerator") == "emulated-cpu"


DIMENSIONS = (
    Dimension("devices", r"\d+", int, 0, None, _devices_not_applicable),
    Dimension("threads", r"\d+|all", _threads_value, "all", "threads={}", None),
    Dimension(
        "precision",
        "|".join(catalog.PRECISIONS),
        str,
        catalog.FLOAT32,
        "{}",
        _precision_not_applicable,
    ),
    Dimension(
        "compile",
        "|".join(catalog.COMPILE_MODES),
        str,
        catalog.COMPILE_AUTO,
        "compile={}",
        _compile_not_applicable,
    ),
    Dimension(
        "versions",
        variants.LABEL_PATTERN,
        str,
        variants.PINNED,
        "{}",
        _versions_not_applicable,
        _versions_values,
    ),
)
DIMENSION_NAMES = tuple(dimension.name for dimension in DIMENSIONS)

MACHINE_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"
CELL = ("machine", "dataset", "model", "backend") + DIMENSION_NAMES


class Run(NamedTuple):
    """One run: a cell (its workload, backend, a value of each dimension and
    its machine) and the cell's repeat. The values are as a path's wildcards
    give them (text) or as the matrix expands them; each dimension's
    ``parse`` reads either. The dimensions' fields are ``DIMENSIONS``' names
    and defaults, in their order (a test holds them equal)."""

    dataset: str
    model: str
    backend: str
    devices: Union[int, str] = 0
    threads: Union[int, str] = "all"
    precision: str = catalog.FLOAT32
    compile: str = catalog.COMPILE_AUTO
    versions: str = variants.PINNED
    repeat: Union[int, str] = 1
    machine: str = "local"


def record_cell(record: Record) -> Dict[str, Any]:
    """A run record's cell and repeat ({column: value}), of a record of the
    current version (dlbench.record.contract.read reads older ones as one)."""
    return {key: record.get(key) for key in CELL + ("repeat",)}


def cell_columns(*without: str) -> List[str]:
    """The cell's columns but ``without``: the groups in which the omitted
    ones are compared (without "backend": the backends on one workload and
    point)."""
    return [column for column in CELL if column not in without]


def shown_dimensions(frame: "pandas.DataFrame") -> List[str]:
    """The dimension columns that tables and labels name: the devices always,
    the machine and every other dimension where ``frame`` holds more than
    one value (one machine, one thread count: as tables always looked)."""
    return [
        column
        for column in cell_columns("dataset", "model", "backend")
        if column == "devices" or frame[column].nunique() > 1
    ]


WORKLOAD_KEYS = ("dataset", "model", "task")
# Everything else in a workload entry is a hyper-parameter of that workload.
NOT_HYPER: Tuple[str, ...] = WORKLOAD_KEYS + ("backends", "backend_settings")
NOT_HYPER += ("accuracy_tolerance", "repeats", "timeout_minutes", "trained_weights")
NOT_HYPER += ("time_to_accuracy",)
NOT_HYPER += DIMENSION_NAMES


# The schema's defaults, for configs that did not pass through it (tests).
DEFAULTS = {"accelerator": "gpu", "batch_scaling": "fixed_global"}


def option(config: Config, key: str) -> Any:
    return config.get(key, DEFAULTS[key])


class ConfigError(ValueError):
    """A config that the schema accepts but that cannot run, naming the key."""


# JSON Schema counts 3.0 as an integer; these keys are used as ints.
INTEGER_KEYS: Tuple[str, ...] = ("repeats", "seed", "threads", "batch_size", "epochs", "warmup")
INTEGER_KEYS += ("latency_samples", "throughput_batches")


def _as_int(value):
    return int(value) if isinstance(value, float) and value.is_integer() else value


def normalise(config: Config) -> Config:
    """Whole-number floats where the config means integers (after the schema
    accepted them), and with ``generated_data`` every downloaded dataset's
    generated stand-in in its place, in place."""
    entries = list(config.get("workloads") or [])
    if config.get("generated_data"):
        stand_in = BUILT_IN.generated_stand_in
        for entry in entries + list(config.get("exclude") or []):
            if "dataset" in entry:
                entry["dataset"] = stand_in(entry["dataset"])

        def stand_in_named(name):
            dataset, model = name.split("/")
            return "{}/{}".format(stand_in(dataset), model)

        check = config.get("equivalence_check") or {}
        if check.get("workloads"):
            check["workloads"] = [stand_in_named(name) for name in check["workloads"]]
        for key in ("op_profile", "python_stacks"):
            if isinstance(config.get(key), list):
                config[key] = [stand_in_named(name) for name in config[key]]
    for entry in [config] + entries:
        for key in INTEGER_KEYS:
            if key in entry:
                entry[key] = _as_int(entry[key])
    for dimension in (d for d in DIMENSIONS if d.values is None):
        for entry in [config] + [e for e in entries if dimension.name in e]:
            values = dimension_values(entry, dimension.name)
            entry[dimension.name] = [dimension.parse(_as_int(value)) for value in values]
    return config


def default_of(name: str) -> Any:
    """The value a dimension takes where nothing names one."""
    return DIMENSIONS[DIMENSION_NAMES.index(name)].default


def dimension_values(config: Config, name: str, entry: Optional[Entry] = None) -> List[Any]:
    """The values of one dimension, a list whether the config gave a list or
    one value: the workload ``entry``'s own where it names them (a workload
    may narrow or change the matrix along a dimension), else the config's."""
    dimension = DIMENSIONS[DIMENSION_NAMES.index(name)]
    if dimension.values is not None:
        return dimension.values(config, entry)
    if entry is not None and name in entry:
        values = entry[name]
    else:
        values = config.get(name, [default_of(name)])
    return values if isinstance(values, list) else [values]


def every_dimension_value(config: Config, name: str) -> List[Any]:
    """The values of one dimension over the config and all its workloads, in order."""
    found = []
    for entry in [None] + list(config["workloads"]):
        for value in dimension_values(config, name, entry):
            if value not in found:
                found.append(value)
    return found


def sanitised(text: str) -> str:
    """A machine name fit for a path: letters, digits, '.', '_' and '-'."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return name[:80] or "machine"


def machine_name(
    config: Config, host: Optional[str] = None, processor: Optional[str] = None
) -> str:
    """The config's machine name or, for "auto", one derived from the host:
    its short name and its GPU model (where it has one) or CPU model."""
    if config.get("machine", "auto") != "auto":
        return config["machine"]
    if processor is None:
        from dlbench.host import runtime

        found = runtime.gpus()
        processor = found[0]["name"] if found else runtime.cpu_model()
    host = (host or platform.node() or "host").split(".")[0]
    processor = re.sub(r"\((R|TM)\)|\bCPU\b|\bProcessor\b|@.*$", " ", processor)
    processor = re.sub(r"\b\d+-Core\b", " ", processor)
    return sanitised("{}-{}".format(host, "-".join(processor.split()))).lower()


# The environment in which the workflow itself builds Keras models (shared
# initial weights, FLOPs of the user's own models).
KERAS_ON_TORCH = "keras-torch"


def workload(config: Config, dataset: str, model: str) -> Entry:
    for entry in config["workloads"]:
        if entry["dataset"] == dataset and entry["model"] == model:
            return entry
    raise KeyError("no workload {}/{} in the config".format(dataset, model))


def hyper_parameters(entry: Entry) -> Dict[str, Any]:
    return {key: value for key, value in entry.items() if key not in NOT_HYPER}


def backend_settings(config: Config, entry: Entry, backend: str) -> Dict[str, Any]:
    """The backend's settings, with this workload's own over them."""
    settings = dict(config["backends"][backend] or {})
    settings.update((entry.get("backend_settings") or {}).get(backend) or {})
    return settings


def workload_backends(config: Config, entry: Entry) -> List[str]:
    return entry.get("backends") or list(config["backends"])


def points(config: Config, entry: Optional[Entry] = None) -> List[Point]:
    """Every point of the dimensions ({name: value}) of the workload
    ``entry`` (the config's where it names none), in a stable order."""
    values = itertools.product(*(dimension_values(config, name, entry) for name in DIMENSION_NAMES))
    return [dict(zip(DIMENSION_NAMES, chosen)) for chosen in values]


# The plots of every workload of a task.
PLOTS = {"train": ("epoch_time", "convergence"), "infer": ("latency", "throughput")}


def plots(config: Config, entry: Entry) -> List[str]:
    """The plots of the workload ``entry``: its task's, the speed-up against
    the device count where it has two counts of the accelerator (the CPU is
    other hardware), against the thread count where it has two counts."""
    task = entry.get("task", "train")
    found = list(PLOTS[task])
    accelerated = [d for d in dimension_values(config, "devices", entry) if d > 0]
    if task == "train" and len(accelerated) >= 2:
        found.append("scaling")
    if len(dimension_values(config, "threads", entry)) >= 2:
        found.append("threads_scaling")
    return found


def cell_not_applicable(config: Config, entry: Entry, backend: str, point: Point) -> Optional[str]:
    """Why ``backend`` has no cell for the workload ``entry`` at ``point``
    (a value of every dimension), or None when it has one: the workload's
    reason (task, model), else the first dimension's that has one, else the
    config's ``exclude``."""
    task = entry.get("task", "train")
    reason = config_registry.registry_of(config).not_applicable(backend, task, model=entry["model"])
    for dimension in DIMENSIONS:
        if reason is None and dimension.not_applicable is not None:
            reason = dimension.not_applicable(config, backend, task, point)
    if reason is None:
        item = exclusion(config, entry, backend, point)
        if item is not None:
            reason = "n/a (left out by the config: exclude {})".format(describe_entry(item))
    return reason


def exclusion(config: Config, entry: Entry, backend: str, point: Point) -> Optional[Dict[str, Any]]:
    """The first item of the config's ``exclude`` whose every value the cell
    has (a backend, dataset, model or dimension value each), or None."""
    cell = dict(point, backend=backend, dataset=entry["dataset"], model=entry["model"])
    for item in config.get("exclude") or []:
        if has_values(cell, item):
            return item
    return None


def has_values(cell: Mapping[str, Any], item: Mapping[str, Any]) -> bool:
    """Whether ``cell`` ({column: value}) has every value ``item`` names, as
    text (an ``exclude`` item, a campaign file's ``select`` item)."""
    return all(str(cell[key]) == str(value) for key, value in item.items())


def describe_entry(item: Mapping[str, Any]) -> str:
    return ", ".join("{}={}".format(key, value) for key, value in item.items())


def runnable_backends(config: Config, entry: Entry, point: Optional[Point] = None) -> List[str]:
    """The workload's backends that have a cell at ``point`` (at some
    point of the config when None; a partial point fixes those
    dimensions only)."""
    chosen = [dict(s, **(point or {})) for s in points(config, entry)]
    return [
        backend
        for backend in workload_backends(config, entry)
        if any(not cell_not_applicable(config, entry, backend, s) for s in chosen)
    ]


def not_applicable_cells(config: Config) -> List[Dict[str, Any]]:
    """The cells the matrix leaves out because the backend cannot do the
    task (an inference-only backend on a training workload), cannot do it
    on that many devices, or has no such precision or mode of compilation:
    shown in the tables with the reason, never run and never counted as
    failures."""
    found = []
    machine = machine_name(config)
    for entry in config["workloads"]:
        task = entry.get("task", "train")
        for backend, point in itertools.product(
            workload_backends(config, entry), points(config, entry)
        ):
            if not owns_version(config, backend, point["versions"]):
                continue  # another backend's variant: no cell, not an n/a one
            reason = cell_not_applicable(config, entry, backend, point)
            if reason:
                devices = point["devices"]
                found.append(
                    {
                        "machine": machine,
                        "dataset": entry["dataset"],
                        "model": entry["model"],
                        "backend": backend,
                        **point,
                        "task": task,
                        "accelerator": option(config, "accelerator") if devices else "cpu",
                        "reason": reason,
                    }
                )
    return found


def accuracy_tolerance(config: Config, entry: Entry):
    return entry.get("accuracy_tolerance", config["accuracy_tolerance"])


def repeats(config: Config, entry: Entry):
    """The workload's repeats: its own or the config's, and at least the
    seeds its time to accuracy takes (repeat r has seed ``seed + r - 1``)."""
    chosen = entry.get("repeats", config["repeats"])
    target = entry.get("time_to_accuracy")
    return max(chosen, target.get("seeds", TIME_TO_ACCURACY_SEEDS)) if target else chosen


# The schema's default of a workload's time_to_accuracy seeds.
TIME_TO_ACCURACY_SEEDS = 3


def evaluate_every(entry: Entry) -> Optional[int]:
    """The steps between a training run's evaluations on held-out data, where
    the workload measures its time to accuracy; None where it does not."""
    target = entry.get("time_to_accuracy")
    return target["evaluate_every"] if target else None


def timeout_minutes(config: Config, entry: Entry):
    return entry.get("timeout_minutes", config["timeout_minutes"])


def runs(config: Config) -> List[Run]:
    """Every run of the matrix, in a stable order."""
    machine = machine_name(config)
    found = []
    for entry in config["workloads"]:
        for point in points(config, entry):
            cells = itertools.product(
                runnable_backends(config, entry, point),
                range(1, repeats(config, entry) + 1),
            )
            for backend, repeat in cells:
                found.append(
                    Run(
                        entry["dataset"],
                        entry["model"],
                        backend,
                        repeat=repeat,
                        machine=machine,
                        **point,
                    )
                )
    return found
