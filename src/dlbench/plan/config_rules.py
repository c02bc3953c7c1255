"""The config checked before any job starts, for what its JSON Schema cannot
express (dlbench.plan.validation checks the schema first): workloads that fit
their datasets, backends that can run them, exclusions that exclude
something, the equivalence check's settings, version variants, existing
environments, and what this machine can run (``validate_machine``). A refusal is
a ``matrix.ConfigError`` naming the key."""

import itertools
from typing import Dict

from dlbench import catalog
from dlbench.environments import variants
from dlbench.plan import comparisons, config_registry, matrix, run_spec

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

# Top-level keys that were renamed: {old name: (new name, what it is)}. A
# config that still says the old name is refused, naming the new one.
RENAMED_KEYS = {
    "profile": ("op_profile", "each framework's own op profiler over a window of steady steps"),
}


def check_renamed_keys(config):
    """A key the config no longer has under that name (``RENAMED_KEYS``) is
    refused in one line that names its new name."""
    for old in sorted(RENAMED_KEYS):
        if old in config:
            new, what = RENAMED_KEYS[old]
            raise matrix.ConfigError(
                "{}: this key is now {} ({}); rename it".format(old, new, what)
            )


def _check_framework_settings(config):
    """A backend setting of one framework's (``FRAMEWORK_SETTINGS``) is refused on
    any other framework's backend."""
    places = [("backends.{}".format(b), b, settings) for b, settings in config["backends"].items()]
    for index, workload in enumerate(config["workloads"]):
        for backend, settings in (workload.get("backend_settings") or {}).items():
            places.append(
                ("workloads[{}].backend_settings.{}".format(index, backend), backend, settings)
            )
    for where, backend, settings in places:
        entry = catalog.BACKENDS.get(backend)
        framework = entry.get("framework") if entry is not None else None
        for key in sorted(settings or {}):
            frameworks, what = FRAMEWORK_SETTINGS.get(key, (None, None))
            if frameworks is not None and framework not in frameworks:
                raise matrix.ConfigError(
                    "{}.{}: {}; {} runs on {}".format(where, key, what, backend, framework)
                )


def validate(config):
    """Refuse, before any job starts, what the JSON schema cannot express
    (and make whole-number floats integers: ``normalise``)."""
    matrix.normalise(config)
    try:
        registry = config_registry.registry_of(config)
    except ValueError as error:  # a name the built-in ones have, or own data files refused
        raise matrix.ConfigError(str(error)) from None
    _check_versions(config)
    for name in sorted(config.get("custom_models") or {}):
        problem = registry.workload(name).source_problem()
        if problem:
            raise matrix.ConfigError(problem)
    seen: Dict[str, int] = {}  # workload name: its index
    for index, workload in enumerate(config["workloads"]):
        key = "workloads[{}]".format(index)
        name = "{}/{}".format(workload["dataset"], workload["model"])
        if workload["dataset"] not in registry.datasets:
            raise matrix.ConfigError(
                "{}.dataset: '{}' is not one of the datasets ({}; or one of your own under "
                "own_datasets or synthetic_datasets)".format(
                    key, workload["dataset"], ", ".join(sorted(registry.datasets))
                )
            )
        if workload["model"] not in registry.models:
            raise matrix.ConfigError(
                "{}.model: '{}' is not one of the workloads ({}; one folder each in "
                "src/dlbench/models/workloads, or a model of your own under custom_models)".format(
                    key, workload["model"], ", ".join(sorted(registry.models))
                )
            )
        if not registry.fits(workload["model"], workload["dataset"]):
            raise matrix.ConfigError(
                "{}.model: model '{}' does not fit dataset '{}' (input {}{}); it takes "
                "inputs {}".format(
                    key,
                    workload["model"],
                    workload["dataset"],
                    registry.datasets[workload["dataset"]]["input"],
                    ", samples of shape {}".format(
                        list(registry.input_shape_of(workload["dataset"]))
                    )
                    if registry.is_own(workload["dataset"])
                    else "",
                    list(registry.models[workload["model"]]["inputs"]),
                )
            )
        if name in seen:
            raise matrix.ConfigError(
                "{}: workload {} is already defined at workloads[{}]".format(key, name, seen[name])
            )
        seen[name] = index
        for backend in workload.get("backends", []):
            if backend not in config["backends"]:
                raise matrix.ConfigError(
                    "{}.backends: '{}' is not among the configured backends {}".format(
                        key, backend, sorted(config["backends"])
                    )
                )
        task = workload.get("task", "train")
        if workload.get("trained_weights") and task != "infer":
            raise matrix.ConfigError(
                "{}.trained_weights: only an inference workload's weights are trained before "
                "its runs; {} trains from the shared initial weights".format(key, name)
            )
        if workload.get("trained_weights") and (
            registry.speed_only(workload["dataset"]) or registry.ends_in_features(workload["model"])
        ):
            raise matrix.ConfigError(
                "{}.trained_weights: there is nothing to learn ({}): leave trained_weights out "
                "(its runs share the initial draw)".format(
                    key,
                    "{} ends in features, not classes".format(workload["model"])
                    if registry.ends_in_features(workload["model"])
                    else "{}'s labels are random".format(workload["dataset"]),
                )
            )
        if not matrix.runnable_backends(config, workload):
            backends = matrix.workload_backends(config, workload)
            # no backend runs: every cell has its reason
            reasons = sorted(
                {
                    reason
                    for b in backends
                    for point in matrix.points(config, workload)
                    if (reason := matrix.cell_not_applicable(config, workload, b, point))
                }
            )
            raise matrix.ConfigError(
                "{}.backends: no backend of {} can run task '{}' at any value of the "
                "dimensions of {} ({})".format(
                    key,
                    backends,
                    task,
                    ", ".join(
                        "{} {}".format(name, matrix.dimension_values(config, name, workload))
                        for name in matrix.DIMENSION_NAMES
                    ),
                    "; ".join(reasons),
                )
            )
    _check_existing_environments(config)
    _check_framework_settings(config)
    _check_time_to_accuracy(config)
    _check_equivalence_settings(config)
    _check_chosen_workloads(config)
    _check_exclusions(config)
    for entry_index, entry in enumerate(config["workloads"]):
        key = "workloads[{}].devices".format(entry_index) if "devices" in entry else "devices"
        for index, devices in enumerate(matrix.dimension_values(config, "devices", entry)):
            if devices and entry.get("task", "train") == "train" and entry["batch_size"] % devices:
                raise matrix.ConfigError(
                    "{}[{}]: {} devices cannot split workload {}/{}'s batch_size {} "
                    "evenly (batch_scaling: {} keeps the global batch); use a batch_size "
                    "divisible by every device count".format(
                        key,
                        index,
                        devices,
                        entry["dataset"],
                        entry["model"],
                        entry["batch_size"],
                        matrix.option(config, "batch_scaling"),
                    )
                )


def _check_time_to_accuracy(config):
    """A workload's time to accuracy: a training workload's, with learned
    labels to reach a target on, an accuracy target an accuracy can reach,
    and a reference backend among those that train it."""
    registry = config_registry.registry_of(config)
    for index, workload in enumerate(config["workloads"]):
        chosen = workload.get("time_to_accuracy")
        if not chosen:
            continue
        key = "workloads[{}].time_to_accuracy".format(index)
        name = "{}/{}".format(workload["dataset"], workload["model"])
        if workload.get("task", "train") != "train":
            raise matrix.ConfigError(
                "{}: only a training workload has a time to accuracy; {} is timed at "
                "inference".format(key, name)
            )
        if registry.speed_only(workload["dataset"]) or registry.ends_in_features(workload["model"]):
            raise matrix.ConfigError(
                "{}: {} has no accuracy to reach (its labels are random or it ends in "
                "features): leave time_to_accuracy out".format(key, name)
            )
        target = chosen["target"]
        metric = chosen.get("metric", "val_accuracy")
        if metric == "val_accuracy" and not isinstance(target, dict) and not 0 < target <= 1:
            raise matrix.ConfigError(
                "{}.target: {} is no validation accuracy to reach (a fraction in (0, 1])".format(
                    key, target
                )
            )
        if isinstance(target, dict):
            reference = target["reference"]
            trained_by = matrix.runnable_backends(config, workload)
            if reference not in trained_by:
                raise matrix.ConfigError(
                    "{}.target.reference: '{}' does not train {} here (those that do: {})".format(
                        key, reference, name, ", ".join(sorted(trained_by)) or "none"
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
        for backend, point in itertools.product(
            matrix.workload_backends(config, entry), matrix.points(config, entry)
        ):
            item = matrix.exclusion(config, entry, backend, point)
            if item is not None and not matrix.cell_not_applicable(
                unexcluded, entry, backend, point
            ):
                used.add(excluded.index(item))
    for run in comparisons.check_runs(unexcluded):
        entry = matrix.workload(config, run.dataset, run.model)
        item = matrix.exclusion(config, entry, run.backend, run._asdict())
        if item is not None:
            used.add(excluded.index(item))
    for index, item in enumerate(excluded):
        if index not in used:
            raise matrix.ConfigError(
                "exclude[{}]: {} matches no cell of the config's workloads, backends and "
                "dimensions".format(index, matrix.describe_entry(item))
            )


def validate_machine(config, cpus, gpus=None):
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
            if name == "devices" and matrix.option(config, "accelerator") != "gpu":
                continue
            for index, value in enumerate(matrix.dimension_values(config, name, entry)):
                if name == "devices" and limit == 0 and int(value) > 0:
                    raise matrix.ConfigError(
                        "{}[{}]: {} asks for GPUs, and this machine has none (nvidia-smi "
                        "lists none, or CUDA_VISIBLE_DEVICES is empty)\nrun devices >= 1 on a "
                        "GPU machine or through a cluster profile (docs/clusters.md), or set "
                        "accelerator: emulated-cpu to try the data-parallel code on the "
                        "CPU".format(name if key is None else key + "." + name, index, value)
                    )
                if value != "all" and int(value) > limit:
                    raise matrix.ConfigError(
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
    settings = comparisons.check_settings(config)
    reference = settings["reference"]
    if reference != "median" and reference not in config["backends"]:
        raise matrix.ConfigError(
            "equivalence_check.reference: '{}' is neither median nor a configured backend "
            "({})".format(reference, ", ".join(sorted(config["backends"])))
        )
    # A config cut down to fewer workloads keeps its list: names are
    # checked against the datasets and models, not the workloads configured.
    registry = config_registry.registry_of(config)
    for index, name in enumerate(settings.get("workloads") or []):
        dataset, model = name.split("/")
        if dataset not in registry.datasets or model not in registry.models:
            raise matrix.ConfigError(
                "equivalence_check.workloads[{}]: '{}' names no dataset/model (datasets: {}; "
                "models: {})".format(
                    index,
                    name,
                    ", ".join(sorted(registry.datasets)),
                    ", ".join(sorted(registry.models)),
                )
            )


def _check_chosen_workloads(config):
    """The workloads ``op_profile`` and ``python_stacks`` name are workloads of the config."""
    configured = {"{dataset}/{model}".format(**entry) for entry in config["workloads"]}
    for key in ("op_profile", "python_stacks"):
        named = config.get(key)
        for index, name in enumerate(named if isinstance(named, list) else []):
            if name not in configured:
                raise matrix.ConfigError(
                    "{}[{}]: '{}' is not a workload of the config ({})".format(
                        key, index, name, ", ".join(sorted(configured))
                    )
                )


def _check_versions(config):
    """Each version variant belongs to a configured backend and names exact
    versions of distributions; no two variants of a backend install the same."""
    for backend, listed in sorted((config.get("versions") or {}).items()):
        if backend not in config["backends"]:
            raise matrix.ConfigError(
                "versions.{}: not among the configured backends {}".format(
                    backend, sorted(config["backends"])
                )
            )
        seen = set()
        for index, pins in enumerate(listed):
            try:
                name = variants.label(pins)
            except variants.VariantError as error:
                raise matrix.ConfigError(
                    "versions.{}[{}]: {}".format(backend, index, error)
                ) from None
            if name in seen:
                raise matrix.ConfigError(
                    "versions.{}[{}]: {} is listed twice".format(backend, index, name)
                )
            seen.add(name)
    known = {
        name for backend in config["backends"] for name in variants.variants_of(config, backend)
    }
    for index, entry in enumerate(config["workloads"]):
        for name in entry.get("versions", []):
            if name not in known:
                raise matrix.ConfigError(
                    "workloads[{}].versions: {} is neither pinned nor a variant "
                    "in versions ({})".format(index, name, ", ".join(sorted(known)))
                )


def _check_existing_environments(config):
    named = config.get("existing_environments") or {}
    known = {
        variants.environment_name(entry.environment(d, "gpu"), version)
        for b, entry in catalog.BACKENDS.items()
        for d in (0, 1)
        for version in variants.variants_of(config, b)
    }
    for name in sorted(named):
        if name not in known:
            raise matrix.ConfigError(
                "existing_environments.{}: not a backend or environment (one of {})".format(
                    name, ", ".join(sorted(known))
                )
            )
    if config.get("env_mode") == "existing":
        accelerator = matrix.option(config, "accelerator")
        unnamed = sorted(
            {
                variants.environment_name(
                    catalog.BACKENDS[backend].environment(devices, accelerator), version
                )
                for backend in config["backends"]
                for devices in matrix.every_dimension_value(config, "devices")
                for version in variants.variants_of(config, backend)
            }
            - {name for name in known if run_spec.existing_python(config, name)}
        )
        if unnamed:
            raise matrix.ConfigError(
                "env_mode: existing runs every backend in an interpreter named in "
                "existing_environments; {} have none (name one, e.g. existing_environments: "
                '{{"{}": /path/to/python}}, or leave them to env_mode auto)'.format(
                    ", ".join(unnamed), unnamed[0]
                )
            )
        trains = any(entry.get("task", "train") == "train" for entry in config["workloads"])
        shared = config.get("initial_weights", "shared") == "shared"
        if trains and shared and not run_spec.existing_python(config, matrix.KERAS_ON_TORCH):
            raise matrix.ConfigError(
                "initial_weights: shared draws the weights by building the Keras model on "
                "{0}; under env_mode: existing name an interpreter for it in "
                "existing_environments, or set initial_weights: own".format(matrix.KERAS_ON_TORCH)
            )
