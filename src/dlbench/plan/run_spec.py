"""What one run is handed (``spec``, a dlbench.record.run_spec.RunSpec):
everything that changes a measurement, so that Snakemake re-runs exactly the
runs whose spec changed; the data-parallel block of devices >= 1
(``data_parallel``); the environment and interpreter a run takes."""

from typing import Any, Dict, Optional, Tuple

from dlbench import catalog
from dlbench.environments import variants
from dlbench.plan import comparisons, config_registry, matrix, paths
from dlbench.plan.config_sources import Config
from dlbench.record.run_spec import RunSpec


def run_environment(config: Config, run: matrix.Run) -> str:
    """The environment a run uses: its backend's CPU or CUDA build, of its
    version variant."""
    environment = catalog.BACKENDS[run.backend].environment(
        int(run.devices), matrix.option(config, "accelerator")
    )
    return variants.environment_name(environment, run.versions)


def existing_python(config: Config, environment: str) -> Optional[str]:
    """The interpreter the config names for an environment (``keras-torch``,
    ``keras-torch.cuda``) or for its backend, or None. A version variant's
    environment (``keras-jax@jax-0.9.2``) runs only where it is named
    itself: the backend's interpreter holds the pinned versions."""
    named = config.get("existing_environments") or {}
    if variants.split(environment)[1] != variants.PINNED:
        return named.get(environment)
    return named.get(environment) or named.get(catalog.backend_of_environment(environment))


def check_spec(config: Config, run: matrix.Run) -> RunSpec:
    """A check run's spec: the run's, with task ``check`` and its steps."""
    return spec(config, run)._replace(
        task="check", check_steps=comparisons.check_settings(config)["steps"], evaluate_every=None
    )


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


def data_parallel(
    config: Config, entry: matrix.Entry, devices: int, backend: str
) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """The hyper-parameters a run on ``devices`` uses, and the block of its
    record that says how they follow from the config (``BATCH_RULES``)."""
    hyper = matrix.hyper_parameters(entry)
    replicas = max(1, devices)
    scaling = matrix.option(config, "batch_scaling") if devices else "fixed_global"
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
        "accelerator": matrix.option(config, "accelerator") if devices else "cpu",
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


def spec(config: Config, run: matrix.Run) -> RunSpec:
    """The full description of one run handed to the harness (a RunSpec;
    the workflow's params hold its ``as_json()``). Everything that changes
    a measurement is in here, so Snakemake re-runs exactly the runs whose
    spec changed."""
    entry = matrix.workload(config, run.dataset, run.model)
    hyper, parallel = data_parallel(config, entry, int(run.devices), run.backend)
    return RunSpec(
        machine=run.machine,
        dataset=run.dataset,
        model=run.model,
        backend=run.backend,
        **{d.name: d.parse(getattr(run, d.name)) for d in matrix.DIMENSIONS},
        dimensions=matrix.DIMENSION_NAMES,
        repeat=int(run.repeat),
        task=entry["task"],
        # Repeats differ in seed; backends of the same repeat share it, and
        # with it the initial data order.
        seed=config["seed"] + int(run.repeat) - 1,
        validate_every_epoch=config["validate_every_epoch"],
        hyper=hyper,
        parallel=parallel,
        environment=run_environment(config, run),
        # The compile mode's settings over the config's (auto: the config's).
        backend_settings=dict(
            matrix.backend_settings(config, entry, run.backend),
            **catalog.BACKENDS[run.backend].compile_settings(run.compile),
        ),
        # Each framework's own op profiler over a window after the clocks
        # (dlbench.run.op_profiling): turning it on re-runs the cells.
        op_profile=workload_chosen(config.get("op_profile", True), entry),
        # A model of the user's: its file and digest, so that an edit re-runs its cells.
        **custom_model_entry(config, run.model),
        **initial_weights_entry(config, entry, run),
        # Where the workload measures time to accuracy: its evaluations' interval.
        evaluate_every=matrix.evaluate_every(entry) if entry["task"] == "train" else None,
    )


def workload_chosen(chosen: Any, entry: matrix.Entry) -> bool:
    """Whether a config's ``op_profile`` or ``python_stacks`` takes in a
    workload: true for every workload, false for none, or a list of
    dataset/model workloads."""
    if isinstance(chosen, list):
        return "{}/{}".format(entry["dataset"], entry["model"]) in chosen
    return bool(chosen)


def initial_weights_entry(config: Config, entry: matrix.Entry, run: matrix.Run) -> Dict[str, Any]:
    """The file of shared weights a run loads (config ``initial_weights:
    shared``, the default), else nothing: the draw for a training run and
    for an inference run without ``trained_weights``, the trained weights
    for one with."""
    if config.get("initial_weights", "shared") != "shared":
        return {}
    seed = config["seed"] + int(run.repeat) - 1
    trained = entry.get("task", "train") == "infer" and entry.get("trained_weights")
    path = paths.TRAINED_WEIGHTS if trained else paths.WEIGHTS
    return {"initial_weights": path.format(dataset=run.dataset, model=run.model, seed=seed)}


def custom_model_entry(config: Config, model: str) -> Dict[str, Any]:
    """A model of the user's: its file, builder and digest, so that an edit
    re-runs its cells and the record says which version ran."""
    registry = config_registry.registry_of(config)
    if not registry.is_custom(model):
        return {}
    return {"custom_model": registry.workload(model).entry()}
