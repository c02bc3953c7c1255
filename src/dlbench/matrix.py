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
NOT_HYPER = WORKLOAD_KEYS + ("backends", "backend_settings", "accuracy_tolerance")


class ConfigError(ValueError):
    """A config that the schema accepts but that cannot run, naming the key."""


def check(config):
    """Refuse, before any job starts, what the JSON schema cannot express."""
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
            raise ConfigError(
                "{}.backends: no backend of {} can run task '{}'".format(
                    key, workload_backends(config, workload), task
                )
            )
    for devices in config["devices"]:
        if devices != 0:
            raise ConfigError(
                "devices: {} is not supported yet; GPU and data-parallel runs come "
                "with device support. Use devices: [0]".format(devices)
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


def runnable_backends(config, entry):
    task = entry.get("task", "train")
    return [b for b in workload_backends(config, entry) if not catalog.not_applicable(b, task)]


def not_applicable_cells(config):
    """The cells the matrix leaves out because the backend cannot do the
    task (an inference-only backend on a training workload): shown in the
    tables with the reason, never run and never counted as failures."""
    found = []
    for entry in config["workloads"]:
        for backend in workload_backends(config, entry):
            reason = catalog.not_applicable(backend, entry.get("task", "train"))
            for devices in config["devices"] if reason else []:
                found.append(
                    {
                        "dataset": entry["dataset"],
                        "model": entry["model"],
                        "backend": backend,
                        "devices": devices,
                        "task": entry.get("task", "train"),
                        "reason": reason,
                    }
                )
    return found


def accuracy_tolerance(config, entry):
    return entry.get("accuracy_tolerance", config["accuracy_tolerance"])


def runs(config):
    """Every run of the matrix, in a stable order."""
    found = []
    for entry in config["workloads"]:
        cells = itertools.product(
            runnable_backends(config, entry), config["devices"], range(1, config["repeats"] + 1)
        )
        for backend, devices, repeat in cells:
            found.append(Run(entry["dataset"], entry["model"], backend, devices, repeat))
    return found


def run_dir(run):
    return str(PurePosixPath(RUN_DIR.format(**run._asdict())))


def spec(config, run):
    """The full description of one run handed to the harness. Everything
    that changes a measurement is in here, so Snakemake re-runs exactly the
    runs whose spec changed."""
    entry = workload(config, run.dataset, run.model)
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
        "hyper": hyper_parameters(entry),
        "backend_settings": backend_settings(config, entry, run.backend),
    }
