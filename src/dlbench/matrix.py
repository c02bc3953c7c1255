"""The benchmark matrix: config checks beyond the schema, and the runs.

A cell is (dataset, model, backend, devices); a run is a cell and a repeat.
The workflow expands the matrix from here; the tests check it directly.
"""

import itertools
from collections import namedtuple
from pathlib import PurePosixPath

from dlbench import catalog

Run = namedtuple("Run", "dataset model backend devices repeat")

RUN_DIR = "results/runs/{dataset}/{model}/{backend}/{devices}/rep{repeat}"
WORKLOAD_KEYS = ("dataset", "model", "task")
# Everything else in a workload entry is a hyper-parameter of that workload.
NOT_HYPER = WORKLOAD_KEYS + ("backends", "backend_settings", "accuracy_tolerance", "repeats")
NOT_HYPER += ("timeout_minutes",)


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
    accepted them), in place."""
    for entry in [config] + list(config.get("workloads") or []):
        for key in INTEGER_KEYS:
            if key in entry:
                entry[key] = _as_int(entry[key])
    if isinstance(config.get("devices"), list):
        config["devices"] = [_as_int(devices) for devices in config["devices"]]
    return config


def check(config):
    """Refuse, before any job starts, what the JSON schema cannot express
    (and make whole-number floats integers: ``normalise``)."""
    normalise(config)
    seen = {}
    for index, workload in enumerate(config["workloads"]):
        key = "workloads[{}]".format(index)
        name = "{}/{}".format(workload["dataset"], workload["model"])
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
        if not runnable_backends(config, workload):
            backends = workload_backends(config, workload)
            reasons = sorted(
                {
                    catalog.not_applicable(
                        b, task, d, option(config, "accelerator"), workload["model"]
                    )
                    for b in backends
                    for d in config["devices"]
                }
            )
            raise ConfigError(
                "{}.backends: no backend of {} can run task '{}' on devices {} ({})".format(
                    key, backends, task, config["devices"], "; ".join(reasons)
                )
            )
    for index, devices in enumerate(config["devices"]):
        for entry in config["workloads"] if devices else []:
            if entry.get("task", "train") == "train" and entry["batch_size"] % devices:
                raise ConfigError(
                    "devices[{}]: {} devices cannot split workload {}/{}'s batch_size {} "
                    "evenly (batch_scaling: {} keeps the global batch); use a batch_size "
                    "divisible by every device count".format(
                        index,
                        devices,
                        entry["dataset"],
                        entry["model"],
                        entry["batch_size"],
                        option(config, "batch_scaling"),
                    )
                )


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


def runnable_backends(config, entry, devices=None):
    """The workload's backends that have a cell on ``devices`` (on some
    device count of the config when None)."""
    task = entry.get("task", "train")
    counts = config["devices"] if devices is None else [devices]
    return [
        backend
        for backend in workload_backends(config, entry)
        if any(
            not catalog.not_applicable(
                backend, task, count, option(config, "accelerator"), entry["model"]
            )
            for count in counts
        )
    ]


def not_applicable_cells(config):
    """The cells the matrix leaves out because the backend cannot do the
    task (an inference-only backend on a training workload) or cannot do it
    on that many devices: shown in the tables with the reason, never run and
    never counted as failures."""
    found = []
    for entry in config["workloads"]:
        task = entry.get("task", "train")
        for backend, devices in itertools.product(
            workload_backends(config, entry), config["devices"]
        ):
            reason = catalog.not_applicable(
                backend, task, devices, option(config, "accelerator"), entry["model"]
            )
            if reason:
                found.append(
                    {
                        "dataset": entry["dataset"],
                        "model": entry["model"],
                        "backend": backend,
                        "devices": devices,
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
    found = []
    for entry in config["workloads"]:
        for devices in config["devices"]:
            cells = itertools.product(
                runnable_backends(config, entry, devices), range(1, repeats(config, entry) + 1)
            )
            for backend, repeat in cells:
                found.append(Run(entry["dataset"], entry["model"], backend, devices, repeat))
    return found


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
    launch = catalog.BACKENDS[backend]["data_parallel"] if devices else {}
    block = {
        "devices": devices,
        "accelerator": option(config, "accelerator") if devices else "cpu",
        "replicas": replicas,
        "launch": launch.get("launch", "one_process"),
        "method": launch.get("method"),
        "global_batch": hyper["batch_size"],
        "per_device_batch": hyper["batch_size"] // replicas,
        "learning_rate": (hyper.get("optimizer") or {}).get("learning_rate"),
        "batch_scaling": scaling,
        "batch_rule": BATCH_RULES[scaling],
    }
    return hyper, block


def run_dir(run):
    return str(PurePosixPath(RUN_DIR.format(**run._asdict())))


def spec(config, run):
    """The full description of one run handed to the harness. Everything
    that changes a measurement is in here, so Snakemake re-runs exactly the
    runs whose spec changed."""
    entry = workload(config, run.dataset, run.model)
    hyper, parallel = data_parallel(config, entry, int(run.devices), run.backend)
    return {
        "dataset": run.dataset,
        "model": run.model,
        "backend": run.backend,
        "devices": int(run.devices),
        "repeat": int(run.repeat),
        "task": entry["task"],
        # Repeats differ in seed; backends of the same repeat share it, and
        # with it the initial data order.
        "seed": config["seed"] + int(run.repeat) - 1,
        "threads": config["threads"],
        "validate_every_epoch": config["validate_every_epoch"],
        "hyper": hyper,
        "parallel": parallel,
        "environment": catalog.environment_of(
            run.backend, int(run.devices), option(config, "accelerator")
        ),
        "backend_settings": backend_settings(config, entry, run.backend),
    }
