"""The benchmark matrix: config checks beyond the schema, and the runs.

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
from collections import namedtuple
from pathlib import PurePosixPath

from dlbench import catalog
from dlbench.environments import variants
from dlbench.models import workloads

# A dimension of the matrix: its name is its config key (a value or a list of
# values, each a cell of its own), its wildcard, its record field and its
# table column. ``parse`` reads a value back from a path or the command line;
# ``not_applicable(config, backend, task, setting)`` says why a backend has no
# cell at the setting's value (None: it has one); ``label`` is how tables name a value.
# ``values(config, entry)``, where given, lists the dimension's values from
# a config key of another form (versions: variants by backend).
Dimension = namedtuple(
    "Dimension", "name pattern parse default label not_applicable values", defaults=(None,)
)


def _threads_value(text):
    return "all" if str(text) == "all" else int(text)


def _devices_not_applicable(config, backend, task, setting):
    return catalog.devices_not_applicable(
        backend, task, setting["devices"], option(config, "accelerator")
    )


def _precision_not_applicable(config, backend, task, setting):
    """No mode for the precision, or (computed on this CPU) no kernels for it here."""
    precision = setting["precision"]
    reason = catalog.precision_not_applicable(backend, precision)
    if reason is None and on_the_cpu(config, setting):
        reason = catalog.precision_cpu_not_applicable(backend, precision)
    return reason


def _compile_not_applicable(config, backend, task, setting):
    return catalog.compile_not_applicable(backend, setting["compile"])


def _versions_not_applicable(config, backend, task, setting):
    if owns_version(config, backend, setting["versions"]):
        return None
    return "{} is not a version variant of {}".format(setting["versions"], backend)


def owns_version(config, backend, version):
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


def on_the_cpu(config, setting):
    """Whether a cell at ``setting`` computes on this machine's CPU."""
    return not setting["devices"] or option(config, "accelerator") == "emulated-cpu"


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
# The dimensions a config gives as a value or a list of values.
LISTED_DIMENSIONS = tuple(d.name for d in DIMENSIONS if d.values is None)

MACHINE_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"
CELL = ("machine", "dataset", "model", "backend") + DIMENSION_NAMES
Run = namedtuple(
    "Run",
    ("dataset", "model", "backend") + DIMENSION_NAMES + ("repeat", "machine"),
    defaults=tuple(d.default for d in DIMENSIONS) + (1, "local"),
)


def record_cell(record):
    """A run record's cell and repeat ({column: value}); a dimension the
    record predates at its default (records written before precision and
    compile were dimensions ran in float32, compile auto)."""
    return {
        key: record.get(key, default_of(key) if key in DIMENSION_NAMES else None)
        for key in CELL + ("repeat",)
    }


def cell_columns(*without):
    """The cell's columns but ``without``: the groups in which the omitted
    ones are compared (without "backend": the backends on one workload and
    setting)."""
    return [column for column in CELL if column not in without]


def shown_settings(frame):
    """The setting columns that tables and labels name: the devices always,
    the machine and every other dimension where ``frame`` holds more than
    one value (one machine, one thread count: as tables always looked)."""
    return [
        column
        for column in cell_columns("dataset", "model", "backend")
        if column == "devices" or frame[column].nunique() > 1
    ]


RUN_DIR = "results/runs/{machine}/{dataset}/{model}/{backend}/"
RUN_DIR += "/".join("%s={%s}" % (name, name) for name in DIMENSION_NAMES) + "/rep{repeat}"
WORKLOAD_KEYS = ("dataset", "model", "task")
# Everything else in a workload entry is a hyper-parameter of that workload.
NOT_HYPER = WORKLOAD_KEYS + ("backends", "backend_settings", "accuracy_tolerance", "repeats")
NOT_HYPER += ("timeout_minutes", "trained_weights") + DIMENSION_NAMES


# The schema's defaults, for configs that did not pass through it (tests).
DEFAULTS = {"accelerator": "gpu", "batch_scaling": "fixed_global"}


def option(config, key):
    return config.get(key, DEFAULTS[key])


class ConfigError(ValueError):
    """A config that the schema accepts but that cannot run, naming the key."""


# JSON Schema counts 3.0 as an integer; these keys are used as ints.
INTEGER_KEYS = ("repeats", "seed", "threads", "batch_size", "epochs", "warmup")
INTEGER_KEYS += ("latency_samples", "throughput_batches")


def _as_int(value):
    return int(value) if isinstance(value, float) and value.is_integer() else value


def normalise(config):
    """Whole-number floats where the config means integers (after the schema
    accepted them), and with ``generated_data`` every downloaded dataset's
    generated stand-in in its place, in place."""
    entries = list(config.get("workloads") or [])
    if config.get("generated_data"):
        stand_in = catalog.generated_stand_in
        for entry in entries + list(config.get("exclude") or []):
            if "dataset" in entry:
                entry["dataset"] = stand_in(entry["dataset"])
        check = config.get("equivalence_check") or {}
        if check.get("workloads"):
            check["workloads"] = [
                "{}/{}".format(stand_in(name.split("/")[0]), name.split("/")[1])
                for name in check["workloads"]
            ]
    for entry in [config] + entries:
        for key in INTEGER_KEYS:
            if key in entry:
                entry[key] = _as_int(entry[key])
    for dimension in (d for d in DIMENSIONS if d.values is None):
        for entry in [config] + [e for e in entries if dimension.name in e]:
            values = dimension_values(entry, dimension.name)
            entry[dimension.name] = [dimension.parse(_as_int(value)) for value in values]
    return config


def default_of(name):
    """The value a dimension takes where nothing names one."""
    return DIMENSIONS[DIMENSION_NAMES.index(name)].default


def dimension_values(config, name, entry=None):
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


def every_dimension_value(config, name):
    """The values of one dimension over the config and all its workloads, in order."""
    found = []
    for entry in [None] + list(config["workloads"]):
        for value in dimension_values(config, name, entry):
            if value not in found:
                found.append(value)
    return found


def sanitised(text):
    """A machine name fit for a path: letters, digits, '.', '_' and '-'."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return name[:80] or "machine"


def machine_name(config, host=None, processor=None):
    """The config's machine name or, for "auto", one derived from the host:
    its short name and its GPU model (where it has one) or CPU model."""
    if config.get("machine", "auto") != "auto":
        return config["machine"]
    if processor is None:
        from dlbench.run import runtime

        found = runtime.gpus()
        processor = found[0]["name"] if found else runtime.cpu_model()
    host = (host or platform.node() or "host").split(".")[0]
    processor = re.sub(r"\((R|TM)\)|\bCPU\b|\bProcessor\b|@.*$", " ", processor)
    processor = re.sub(r"\b\d+-Core\b", " ", processor)
    return sanitised("{}-{}".format(host, "-".join(processor.split()))).lower()


# Backend settings only some frameworks have, and those frameworks.
FRAMEWORK_SETTINGS = {
    "compilation_cache": (("jax",), "JAX's persistent compilation cache"),
    "cxxflags": (("theano", "pytensor"), "the g++ flags Theano and PyTensor compile ops with"),
    "precompiled_headers": (
        ("theano", "pytensor"),
        "Theano's and PyTensor's ops compiled with their #include lines precompiled",
    ),
    "deterministic": (
        ("torch", "tensorflow", "jax"),
        "deterministic algorithms (torch, TensorFlow and XLA have a switch for them)",
    ),
    "cudnn_autotune": (("torch",), "torch's cudnn.benchmark"),
}


def _check_framework_settings(config):
    """A setting of one framework's (``FRAMEWORK_SETTINGS``) is refused on
    any other framework's backend."""
    places = [("backends.{}".format(b), b, settings) for b, settings in config["backends"].items()]
    for index, workload in enumerate(config["workloads"]):
        for backend, settings in (workload.get("backend_settings") or {}).items():
            places.append(
                ("workloads[{}].backend_settings.{}".format(index, backend), backend, settings)
            )
    for where, backend, settings in places:
        framework = catalog.BACKENDS.get(backend, {}).get("framework")
        for key in sorted(settings or {}):
            frameworks, what = FRAMEWORK_SETTINGS.get(key, (None, None))
            if frameworks is not None and framework not in frameworks:
                raise ConfigError(
                    "{}.{}: {}; {} runs on {}".format(where, key, what, backend, framework)
                )


def check(config):
    """Refuse, before any job starts, what the JSON schema cannot express
    (and make whole-number floats integers: ``normalise``)."""
    normalise(config)
    try:
        catalog.add_from_config(config)
    except ValueError as error:  # a name the built-in workloads or datasets have
        raise ConfigError(str(error)) from None
    _check_versions(config)
    for name in sorted(config.get("custom_models") or {}):
        problem = workloads.facts(name).source_problem()
        if problem:
            raise ConfigError(problem)
    seen = {}
    for index, workload in enumerate(config["workloads"]):
        key = "workloads[{}]".format(index)
        name = "{}/{}".format(workload["dataset"], workload["model"])
        if workload["dataset"] not in catalog.DATASETS:
            raise ConfigError(
                "{}.dataset: '{}' is not one of the datasets ({}; or one of your own under "
                "synthetic_datasets)".format(
                    key, workload["dataset"], ", ".join(sorted(catalog.DATASETS))
                )
            )
        if workload["model"] not in catalog.MODELS:
            raise ConfigError(
                "{}.model: '{}' is not one of the workloads ({}; one folder each in "
                "src/dlbench/models/workloads, or a model of your own under custom_models)".format(
                    key, workload["model"], ", ".join(sorted(catalog.MODELS))
                )
            )
        if not catalog.model_fits_dataset(workload["model"], workload["dataset"]):
            raise ConfigError(
                "{}.model: model '{}' does not fit dataset '{}' (input {}); it takes "
                "inputs {}".format(
                    key,
                    workload["model"],
                    workload["dataset"],
                    catalog.DATASETS[workload["dataset"]]["input"],
                    catalog.MODELS[workload["model"]]["inputs"],
                )
            )
        if name in seen:
            raise ConfigError(
                "{}: workload {} is already defined at workloads[{}]".format(key, name, seen[name])
            )
        seen[name] = index
        for backend in workload.get("backends", []):
            if backend not in config["backends"]:
                raise ConfigError(
                    "{}.backends: '{}' is not among the configured backends {}".format(
                        key, backend, sorted(config["backends"])
                    )
                )
        task = workload.get("task", "train")
        if workload.get("trained_weights") and task != "infer":
            raise ConfigError(
                "{}.trained_weights: only an inference workload's weights are trained before "
                "its runs; {} trains from the shared initial weights".format(key, name)
            )
        if workload.get("trained_weights") and (
            catalog.speed_only(workload["dataset"]) or catalog.ends_in_features(workload["model"])
        ):
            raise ConfigError(
                "{}.trained_weights: there is nothing to learn ({}): leave trained_weights out "
                "(its runs share the initial draw)".format(
                    key,
                    "{} ends in features, not classes".format(workload["model"])
                    if catalog.ends_in_features(workload["model"])
                    else "{}'s labels are random".format(workload["dataset"]),
                )
            )
        if not runnable_backends(config, workload):
            backends = workload_backends(config, workload)
            reasons = sorted(
                {
                    cell_not_applicable(config, workload, b, setting)
                    for b in backends
                    for setting in settings(config, workload)
                }
            )
            raise ConfigError(
                "{}.backends: no backend of {} can run task '{}' at any setting of {} ({})".format(
                    key,
                    backends,
                    task,
                    ", ".join(
                        "{} {}".format(name, dimension_values(config, name, workload))
                        for name in DIMENSION_NAMES
                    ),
                    "; ".join(reasons),
                )
            )
    _check_existing_environments(config)
    _check_framework_settings(config)
    _check_equivalence_settings(config)
    _check_exclusions(config)
    for entry_index, entry in enumerate(config["workloads"]):
        key = "workloads[{}].devices".format(entry_index) if "devices" in entry else "devices"
        for index, devices in enumerate(dimension_values(config, "devices", entry)):
            if devices and entry.get("task", "train") == "train" and entry["batch_size"] % devices:
                raise ConfigError(
                    "{}[{}]: {} devices cannot split workload {}/{}'s batch_size {} "
                    "evenly (batch_scaling: {} keeps the global batch); use a batch_size "
                    "divisible by every device count".format(
                        key,
                        index,
                        devices,
                        entry["dataset"],
                        entry["model"],
                        entry["batch_size"],
                        option(config, "batch_scaling"),
                    )
                )


def _check_exclusions(config):
    """An ``exclude`` item that leaves out no cell the matrix would run, nor
    an equivalence check's run, is a mistake (a misspelt value, a backend the
    workload does not run)."""
    excluded = config.get("exclude") or []
    if not excluded:
        return
    unexcluded = dict(config, exclude=[])
    used = set()
    for entry in config["workloads"]:
        for backend, setting in itertools.product(
            workload_backends(config, entry), settings(config, entry)
        ):
            item = _exclusion(config, entry, backend, setting)
            if item is not None and not cell_not_applicable(unexcluded, entry, backend, setting):
                used.add(excluded.index(item))
    for run in check_runs(unexcluded):
        entry = workload(config, run.dataset, run.model)
        item = _exclusion(config, entry, run.backend, run._asdict())
        if item is not None:
            used.add(excluded.index(item))
    for index, item in enumerate(excluded):
        if index not in used:
            raise ConfigError(
                "exclude[{}]: {} matches no cell of the config's workloads, backends and "
                "dimensions".format(index, _describe(item))
            )


def check_machine(config, cpus, gpus=None):
    """Refuse what this machine cannot be, before any job starts: a thread
    count above ``cpus`` (the CPUs the workflow may use), a device count
    above ``gpus`` (None: the machine cannot tell). A cell would otherwise be
    labelled with threads or GPUs it never had."""
    for key, entry in [(None, config)] + [
        ("workloads[{}]".format(i), entry) for i, entry in enumerate(config["workloads"])
    ]:
        for name, limit, what in (
            ("threads", cpus, "CPUs this machine lets the workflow use"),
            ("devices", gpus, "GPUs this machine has"),
        ):
            if limit is None or name not in entry:
                continue
            if name == "devices" and option(config, "accelerator") != "gpu":
                continue
            for index, value in enumerate(dimension_values(config, name, entry)):
                if name == "devices" and limit == 0 and int(value) > 0:
                    raise ConfigError(
                        "{}[{}]: {} asks for GPUs, and this machine has none (nvidia-smi "
                        "lists none, or CUDA_VISIBLE_DEVICES is empty)\nrun devices >= 1 on a "
                        "GPU machine or through a cluster profile (docs/clusters.md), or set "
                        "accelerator: emulated-cpu to try the data-parallel code on the "
                        "CPU".format(name if key is None else key + "." + name, index, value)
                    )
                if value != "all" and int(value) > limit:
                    raise ConfigError(
                        "{}[{}]: {} is more than the {} {}; use at most {}{}".format(
                            name if key is None else key + "." + name,
                            index,
                            value,
                            limit,
                            what,
                            limit,
                            ' or "all"' if name == "threads" else "",
                        )
                    )


def _check_equivalence_settings(config):
    settings = check_settings(config)
    reference = settings["reference"]
    if reference != "median" and reference not in config["backends"]:
        raise ConfigError(
            "equivalence_check.reference: '{}' is neither median nor a configured backend "
            "({})".format(reference, ", ".join(sorted(config["backends"])))
        )
    # A config cut down to fewer workloads keeps its list: names are
    # checked against the datasets and models, not the workloads configured.
    for index, name in enumerate(settings.get("workloads") or []):
        dataset, model = name.split("/")
        if dataset not in catalog.DATASETS or model not in catalog.MODELS:
            raise ConfigError(
                "equivalence_check.workloads[{}]: '{}' names no dataset/model (datasets: {}; "
                "models: {})".format(
                    index,
                    name,
                    ", ".join(sorted(catalog.DATASETS)),
                    ", ".join(sorted(catalog.MODELS)),
                )
            )


def run_environment(config, run):
    """The environment a run uses: its backend's CPU or CUDA build, of its
    version variant."""
    environment = catalog.environment_of(
        run.backend, int(run.devices), option(config, "accelerator")
    )
    return variants.environment_name(environment, run.versions)


def existing_python(config, environment):
    """The interpreter the config names for an environment (``keras-torch``,
    ``keras-torch.cuda``) or for its backend, or None. A version variant's
    environment (``keras-jax@jax-0.9.2``) runs only where it is named
    itself: the backend's interpreter holds the pinned versions."""
    named = config.get("existing_environments") or {}
    if variants.split(environment)[1] != variants.PINNED:
        return named.get(environment)
    return named.get(environment) or named.get(catalog.backend_of_environment(environment))


def _check_versions(config):
    """Each version variant belongs to a configured backend and names exact
    versions of distributions; no two variants of a backend install the same."""
    for backend, listed in sorted((config.get("versions") or {}).items()):
        if backend not in config["backends"]:
            raise ConfigError(
                "versions.{}: not among the configured backends {}".format(
                    backend, sorted(config["backends"])
                )
            )
        seen = set()
        for index, pins in enumerate(listed):
            try:
                name = variants.label(pins)
            except variants.VariantError as error:
                raise ConfigError("versions.{}[{}]: {}".format(backend, index, error)) from None
            if name in seen:
                raise ConfigError(
                    "versions.{}[{}]: {} is listed twice".format(backend, index, name)
                )
            seen.add(name)
    known = {
        name for backend in config["backends"] for name in variants.variants_of(config, backend)
    }
    for index, entry in enumerate(config["workloads"]):
        for name in entry.get("versions", []):
            if name not in known:
                raise ConfigError(
                    "workloads[{}].versions: {} is neither pinned nor a variant "
                    "in versions ({})".format(index, name, ", ".join(sorted(known)))
                )


def _check_existing_environments(config):
    named = config.get("existing_environments") or {}
    known = {
        variants.environment_name(catalog.environment_of(b, d, "gpu"), version)
        for b in catalog.BACKENDS
        for d in (0, 1)
        for version in variants.variants_of(config, b)
    }
    for name in sorted(named):
        if name not in known:
            raise ConfigError(
                "existing_environments.{}: not a backend or environment (one of {})".format(
                    name, ", ".join(sorted(known))
                )
            )
    if config.get("env_mode") == "existing":
        accelerator = option(config, "accelerator")
        unnamed = sorted(
            {
                variants.environment_name(
                    catalog.environment_of(backend, devices, accelerator), version
                )
                for backend in config["backends"]
                for devices in every_dimension_value(config, "devices")
                for version in variants.variants_of(config, backend)
            }
            - {name for name in known if existing_python(config, name)}
        )
        if unnamed:
            raise ConfigError(
                "env_mode: existing runs every backend in an interpreter named in "
                "existing_environments; {} have none (name one, e.g. existing_environments: "
                '{{"{}": /path/to/python}}, or leave them to env_mode auto)'.format(
                    ", ".join(unnamed), unnamed[0]
                )
            )
        trains = any(entry.get("task", "train") == "train" for entry in config["workloads"])
        shared = config.get("initial_weights", "shared") == "shared"
        if trains and shared and not existing_python(config, KERAS_ON_TORCH):
            raise ConfigError(
                "initial_weights: shared draws the weights by building the Keras model on "
                "{0}; under env_mode: existing name an interpreter for it in "
                "existing_environments, or set initial_weights: own".format(KERAS_ON_TORCH)
            )


# The environment in which the workflow itself builds Keras models (shared
# initial weights, FLOPs of the user's own models).
KERAS_ON_TORCH = "keras-torch"


def workload(config, dataset, model):
    for entry in config["workloads"]:
        if entry["dataset"] == dataset and entry["model"] == model:
            return entry
    raise KeyError("no workload {}/{} in the config".format(dataset, model))


def hyper_parameters(entry):
    return {key: value for key, value in entry.items() if key not in NOT_HYPER}


def backend_settings(config, entry, backend):
    """The backend's settings, with this workload's own over them."""
    settings = dict(config["backends"][backend] or {})
    settings.update((entry.get("backend_settings") or {}).get(backend) or {})
    return settings


def workload_backends(config, entry):
    return entry.get("backends") or list(config["backends"])


def settings(config, entry=None):
    """Every setting of the dimensions ({name: value}) of the workload
    ``entry`` (the config's where it names none), in a stable order."""
    values = itertools.product(*(dimension_values(config, name, entry) for name in DIMENSION_NAMES))
    return [dict(zip(DIMENSION_NAMES, chosen)) for chosen in values]


# The plots of every workload of a task.
PLOTS = {"train": ("epoch_time", "convergence"), "infer": ("latency", "throughput")}


def plots(config, entry):
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


def cell_not_applicable(config, entry, backend, setting):
    """Why ``backend`` has no cell for the workload ``entry`` at ``setting``
    (a value of every dimension), or None when it has one: the workload's
    reason (task, model), else the first dimension's that has one, else the
    config's ``exclude``."""
    task = entry.get("task", "train")
    reason = catalog.not_applicable(backend, task, model=entry["model"])
    for dimension in DIMENSIONS:
        if reason is None and dimension.not_applicable is not None:
            reason = dimension.not_applicable(config, backend, task, setting)
    if reason is None:
        item = _exclusion(config, entry, backend, setting)
        if item is not None:
            reason = "n/a (left out by the config: exclude {})".format(_describe(item))
    return reason


def _exclusion(config, entry, backend, setting):
    """The first item of the config's ``exclude`` whose every value the cell
    has (a backend, dataset, model or dimension value each), or None."""
    cell = dict(setting, backend=backend, dataset=entry["dataset"], model=entry["model"])
    for item in config.get("exclude") or []:
        if all(str(cell[key]) == str(value) for key, value in item.items()):
            return item
    return None


def _describe(item):
    return ", ".join("{}={}".format(key, value) for key, value in item.items())


def runnable_backends(config, entry, setting=None):
    """The workload's backends that have a cell at ``setting`` (at some
    setting of the config when None; a partial setting fixes those
    dimensions only)."""
    chosen = [dict(s, **(setting or {})) for s in settings(config, entry)]
    return [
        backend
        for backend in workload_backends(config, entry)
        if any(not cell_not_applicable(config, entry, backend, s) for s in chosen)
    ]


def not_applicable_cells(config):
    """The cells the matrix leaves out because the backend cannot do the
    task (an inference-only backend on a training workload), cannot do it
    on that many devices, or has no such precision or mode of compilation:
    shown in the tables with the reason, never run and never counted as
    failures."""
    found = []
    machine = machine_name(config)
    catalog.add_from_config(config)
    for entry in config["workloads"]:
        task = entry.get("task", "train")
        for backend, setting in itertools.product(
            workload_backends(config, entry), settings(config, entry)
        ):
            if not owns_version(config, backend, setting["versions"]):
                continue  # another backend's variant: no cell, not an n/a one
            reason = cell_not_applicable(config, entry, backend, setting)
            if reason:
                devices = setting["devices"]
                found.append(
                    {
                        "machine": machine,
                        "dataset": entry["dataset"],
                        "model": entry["model"],
                        "backend": backend,
                        **setting,
                        "task": task,
                        "accelerator": option(config, "accelerator") if devices else "cpu",
                        "reason": reason,
                    }
                )
    return found


def accuracy_tolerance(config, entry):
    return entry.get("accuracy_tolerance", config["accuracy_tolerance"])


def repeats(config, entry):
    return entry.get("repeats", config["repeats"])


def timeout_minutes(config, entry):
    return entry.get("timeout_minutes", config["timeout_minutes"])


def runs(config):
    """Every run of the matrix, in a stable order."""
    machine = machine_name(config)
    catalog.add_from_config(config)
    found = []
    for entry in config["workloads"]:
        for setting in settings(config, entry):
            cells = itertools.product(
                runnable_backends(config, entry, setting),
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
                        **setting,
                    )
                )
    return found


# The equivalence check (dlbench.run.equivalence): one run per training workload
# and backend, beside the timed runs, never among them.
CHECK_DIR = RUN_DIR.replace("results/runs/", "results/checks/", 1)
CHECK_DEFAULTS = {
    "steps": 4,
    "reference": "median",
    "tolerance": 2e-4,
    "prediction_tolerance": 1e-4,  # equivalence.PREDICTION_TOLERANCE
}


def check_settings(config):
    return dict(CHECK_DEFAULTS, **config.get("equivalence_check", {}))


def check_runs(config):
    """The runs of the equivalence check: every training workload (or those
    ``equivalence_check.workloads`` names, as dataset/model) on each backend
    that trains it, on one CPU thread (devices 0, threads 1), at the first
    value of the other dimensions (each of its versions) and the first
    seed. None where the
    backends start from their own weights (``initial_weights: own``: their
    curves differ from the first step) or where ``equivalence_check.steps``
    is 0."""
    settings = check_settings(config)
    if config.get("initial_weights", "shared") != "shared" or not settings["steps"]:
        return []
    chosen = settings.get("workloads")
    machine = machine_name(config)
    catalog.add_from_config(config)
    # One thread: reductions in one order, and two checks side by side on
    # two cores. Float32: every backend computes it (a reduced precision is
    # judged against float32 by accuracy, not step by step).
    fixed = dict(devices=0, threads=1, precision=catalog.FLOAT32)
    found = []
    for entry in config["workloads"]:
        name = "{dataset}/{model}".format(**entry)
        if entry.get("task", "train") != "train" or (chosen is not None and name not in chosen):
            continue
        for backend in workload_backends(config, entry):
            # each version of the backend: the versions table compares their steps
            for version in dimension_values(config, "versions", entry):
                if not owns_version(config, backend, version):
                    continue
                setting = _first_runnable(config, entry, backend, dict(fixed, versions=version))
                if setting is not None:
                    found.append(
                        Run(
                            entry["dataset"],
                            entry["model"],
                            backend,
                            repeat=1,
                            machine=machine,
                            **setting,
                        )
                    )
    return found


def _first_runnable(config, entry, backend, fixed):
    """The first setting with ``fixed`` values at which ``backend`` has a
    cell, or None."""
    for setting in settings(config, entry):
        setting.update(fixed)
        if not cell_not_applicable(config, entry, backend, setting):
            return setting
    return None


def modes_compared(config):
    """Whether the config runs another precision than float32 or another
    compile mode than auto: then each is compared with float32 eager
    (dlbench.analysis.speedups)."""
    return any(
        every_dimension_value(config, name) != [default_of(name)]
        for name in ("precision", "compile")
    )


def versions_compared(config):
    """Whether a backend may have run on more than one version: the config
    runs one on more than its pinned versions, or imports another machine's
    records (its env files may have pinned others). Then each backend's
    versions are compared (dlbench.analysis.versions)."""
    return bool(config.get("import_results")) or versions_configured(config)


def versions_configured(config):
    """Whether the config runs a backend on more than its pinned versions:
    then the versions table has rows and is in the report (with imported
    records alone it may have none: it is made, not reported)."""
    return any(len(variants.variants_of(config, b)) > 1 for b in config["backends"])


def predictions_compared(config):
    """Whether the inference runs' predictions are compared: they share
    weights (``initial_weights: shared``) and there is inference to run."""
    shared = config.get("initial_weights", "shared") == "shared"
    return shared and any(entry.get("task") == "infer" for entry in config["workloads"])


def check_spec(config, run):
    """A check run's spec: the run's, with task ``check`` and its steps."""
    return dict(spec(config, run), task="check", check_steps=check_settings(config)["steps"])


BATCH_RULES = {
    "fixed_global": (
        "the global batch is the workload's batch_size on every device count; each of the "
        "N replicas takes batch_size/N per step; the learning rate is the configured one "
        "(strong scaling: the same optimisation as on one device)"
    ),
    "per_device": (
        "each of the N replicas takes the workload's batch_size per step (global batch "
        "batch_size*N) and the learning rate is multiplied by N (the linear scaling rule "
        "of Goyal et al., 2017; weak scaling)"
    ),
}


def data_parallel(config, entry, devices, backend):
    """The hyper-parameters a run on ``devices`` uses, and the block of its
    record that says how they follow from the config (``BATCH_RULES``)."""
    hyper = hyper_parameters(entry)
    replicas = max(1, devices)
    scaling = option(config, "batch_scaling") if devices else "fixed_global"
    if entry.get("task", "train") == "train" and scaling == "per_device":
        hyper["batch_size"] = entry["batch_size"] * replicas
        hyper["optimizer"] = dict(
            hyper["optimizer"], learning_rate=hyper["optimizer"]["learning_rate"] * replicas
        )
    # One device runs the framework's single-device program: no launcher, no
    # data-parallel wrapper, as a user runs one GPU. Data parallelism (and its
    # launch and wrapper's cost) starts at two.
    launch = catalog.BACKENDS[backend]["data_parallel"] if devices >= 2 else {}
    method = launch.get("method") or (catalog.SINGLE_DEVICE if devices == 1 else None)
    block = {
        "devices": devices,
        "accelerator": option(config, "accelerator") if devices else "cpu",
        "replicas": replicas,
        "launch": launch.get("launch", "one_process"),
        "method": method,
        "global_batch": hyper["batch_size"],
        "per_device_batch": hyper["batch_size"] // replicas,
        "learning_rate": (hyper.get("optimizer") or {}).get("learning_rate"),
        "batch_scaling": scaling,
        "batch_rule": BATCH_RULES[scaling],
    }
    return hyper, block


def run_of_path(path):
    """The cell and repeat a run record's path names (``RUN_DIR``, or
    ``CHECK_DIR`` for an equivalence check's record), or None."""
    pattern = re.escape(RUN_DIR).replace(r"\{", "{").replace(r"\}", "}")
    pattern = re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", pattern)
    pattern = pattern.replace("results/runs/", "results/(?:runs|checks)/", 1)
    found = re.search(pattern + r"/(?:run|check)\.json$", str(path))
    if found is None:
        return None
    fields = found.groupdict()
    try:
        for dimension in DIMENSIONS:
            fields[dimension.name] = dimension.parse(fields[dimension.name])
        fields["repeat"] = int(fields["repeat"])
    except ValueError:
        return None
    return fields


def run_dir(run):
    return str(PurePosixPath(RUN_DIR.format(**run._asdict())))


def check_dir(run):
    return str(PurePosixPath(CHECK_DIR.format(**run._asdict())))


def spec(config, run):
    """The full description of one run handed to the harness. Everything
    that changes a measurement is in here, so Snakemake re-runs exactly the
    runs whose spec changed."""
    entry = workload(config, run.dataset, run.model)
    hyper, parallel = data_parallel(config, entry, int(run.devices), run.backend)
    return {
        "machine": run.machine,
        "dataset": run.dataset,
        "model": run.model,
        "backend": run.backend,
        **{d.name: d.parse(getattr(run, d.name)) for d in DIMENSIONS},
        "dimensions": list(DIMENSION_NAMES),
        "repeat": int(run.repeat),
        "task": entry["task"],
        # Repeats differ in seed; backends of the same repeat share it, and
        # with it the initial data order.
        "seed": config["seed"] + int(run.repeat) - 1,
        "validate_every_epoch": config["validate_every_epoch"],
        "hyper": hyper,
        "parallel": parallel,
        "environment": run_environment(config, run),
        # The compile mode's settings over the config's (auto: the config's).
        "backend_settings": dict(
            backend_settings(config, entry, run.backend),
            **catalog.compile_settings(run.backend, run.compile),
        ),
        # A model of the user's: its file and digest, so that an edit re-runs its cells.
        **custom_model_entry(run.model),
        **initial_weights_entry(config, entry, run),
    }


# The shared initial weights of a workload and seed (dlbench.models.initial_weights),
# and an inference workload's trained from them (dlbench.run.trained_weights).
WEIGHTS = "results/weights/{dataset}/{model}/seed{seed}.npz"
TRAINED_WEIGHTS = "results/weights/{dataset}/{model}/trained_seed{seed}.npz"


def initial_weights_entry(config, entry, run):
    """The file of shared weights a run loads (config ``initial_weights:
    shared``, the default), else nothing: the draw for a training run and
    for an inference run without ``trained_weights``, the trained weights
    for one with."""
    if config.get("initial_weights", "shared") != "shared":
        return {}
    seed = config["seed"] + int(run.repeat) - 1
    trained = entry.get("task", "train") == "infer" and entry.get("trained_weights")
    path = TRAINED_WEIGHTS if trained else WEIGHTS
    return {"initial_weights": path.format(dataset=run.dataset, model=run.model, seed=seed)}


def custom_model_entry(model):
    """A model of the user's: its file, builder and digest, so that an edit
    re-runs its cells and the record says which version ran."""
    if not workloads.is_custom(model):
        return {}
    return {"custom_model": workloads.facts(model).entry()}
