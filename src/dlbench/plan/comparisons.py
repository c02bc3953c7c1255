"""What the config compares beyond the timed runs: the equivalence check's
runs (one per training workload and backend, on one thread) and settings,
and which comparisons its dimensions ask for (compile modes, versions,
predictions)."""

from dlbench import catalog
from dlbench.environments import variants
from dlbench.plan import matrix

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
    machine = matrix.machine_name(config)
    # One thread: reductions in one order, and two checks side by side on
    # two cores. Float32: every backend computes it (a reduced precision is
    # judged against float32 by accuracy, not step by step).
    fixed = dict(devices=0, threads=1, precision=catalog.FLOAT32)
    found = []
    for entry in config["workloads"]:
        name = "{dataset}/{model}".format(**entry)
        if entry.get("task", "train") != "train" or (chosen is not None and name not in chosen):
            continue
        for backend in matrix.workload_backends(config, entry):
            # each version of the backend: the versions table compares their steps
            for version in matrix.dimension_values(config, "versions", entry):
                if not matrix.owns_version(config, backend, version):
                    continue
                point = first_runnable(config, entry, backend, dict(fixed, versions=version))
                if point is not None:
                    found.append(
                        matrix.Run(
                            entry["dataset"],
                            entry["model"],
                            backend,
                            repeat=1,
                            machine=machine,
                            **point,
                        )
                    )
    return found


def first_runnable(config, entry, backend, fixed):
    """The first point with ``fixed`` values at which ``backend`` has a
    cell, or None."""
    for point in matrix.points(config, entry):
        point.update(fixed)
        if not matrix.cell_not_applicable(config, entry, backend, point):
            return point
    return None


def modes_compared(config):
    """Whether the config runs another precision than float32 or another
    compile mode than auto: then each is compared with float32 eager
    (dlbench.analysis.precision_and_compile)."""
    return any(
        matrix.every_dimension_value(config, name) != [matrix.default_of(name)]
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


def series_configured(config):
    """Whether the config runs a backend on three or more versions: then the
    history of its releases has a series and is in the report (made from
    imported records alone it may have none: it is made, not reported)."""
    return any(len(variants.variants_of(config, b)) > 2 for b in config["backends"])


def predictions_compared(config):
    """Whether the inference runs' predictions are compared: they share
    weights (``initial_weights: shared``) and there is inference to run."""
    shared = config.get("initial_weights", "shared") == "shared"
    return shared and any(entry.get("task") == "infer" for entry in config["workloads"])
