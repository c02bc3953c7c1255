import hashlib
import json
import math
import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.utils import validate
from snakemake_interface_executor_plugins.settings import DeploymentMethod

SRC = str(Path(workflow.basedir) / "src")
# On Snakemake's path, the library reaches every script too (Snakemake hands
# its sys.path to them), in whichever environment the script runs.
sys.path.insert(0, SRC)
# The library's files as rules' inputs, relative to the working directory:
# Snakemake keeps each output's set of input paths, and absolute ones made a
# copied or moved workflow folder re-run everything.
PACKAGE = Path(os.path.relpath(SRC)) / "dlbench"

from dlbench import (
    abstraction,
    catalog,
    envspec,
    import_graph,
    integrity,
    lines,
    matrix,
    workloads,
)
from dlbench.machine_limits import machine_limits

# A config file given with --configfile is the whole matrix. Snakemake would
# merge it into config/config.yaml, adding that file's backends and keys to a
# smaller config; --replace-workflow-config does not reach cluster jobs.
if workflow.config_settings.configfiles:
    config.clear()
    config.update(workflow.config_settings.overwrite_config)

# --config 'devices=[0,1,2]' arrives as strings (Snakemake reads lists with
# YAML's BaseLoader): whole numbers are counts.
for name in matrix.DIMENSION_NAMES:
    if name in config:
        config[name] = [
            int(value) if str(value).isdigit() else value
            for value in matrix.dimension_values(config, name)
        ]

validate(config, workflow.source_path("../schemas/config.schema.yaml"))
try:
    matrix.check(config)
    if workflow.local_exec and not workflow.remote_exec:  # this machine runs the jobs
        matrix.check_machine(config, *machine_limits(config))
except matrix.ConfigError as error:
    raise ValueError(f"invalid config: {error}") from None
# This machine's name, once ("auto": from the host), in every run's path and record.
config["machine"] = matrix.machine_name(config)
MACHINE = config["machine"]


def data_files():
    """Every raw and prepared data file of the configured datasets."""
    for dataset in sorted({entry["dataset"] for entry in config["workloads"]}):
        for filename in catalog.DATASETS[dataset]["files"]:
            yield f"resources/{dataset}/{filename}"
        yield f"results/data/{dataset}.npz"


# A data file that no longer matches the seal its rule gave it (truncated,
# overwritten, bits flipped) is discarded before any job starts, so that it
# is made again; nothing reads it. Jobs started by an executor skip this.
if workflow.is_main_process:
    for reason in integrity.discard_if_corrupt(data_files(), full=True):
        print(f"discarded, will be made again: {reason}", file=sys.stderr)

RUNS = matrix.runs(config)
CHECK_RUNS = matrix.check_runs(config)
WORKLOADS = [(w["dataset"], w["model"], w["task"]) for w in config["workloads"]]
RUN_DIR = matrix.RUN_DIR.replace("{repeat}", "{rep}")
CHECK_DIR = matrix.CHECK_DIR.replace("{repeat}", "{rep}")
DOWNLOADED = "|".join(d for d in catalog.DATASETS if catalog.downloaded(d))
GENERATED = "|".join(d for d in catalog.DATASETS if catalog.generated(d))


wildcard_constraints:
    **{dimension.name: dimension.pattern for dimension in matrix.DIMENSIONS},
    dataset="|".join(catalog.DATASETS),
    model="|".join(catalog.MODELS),
    backend="|".join(catalog.BACKENDS),
    machine=matrix.MACHINE_PATTERN,
    rep=r"\d+",
    seed=r"\d+",
    filename=r"[^/]+",
    family="|".join({entry["family"] for entry in catalog.BACKENDS.values()}),
    environment="|".join(
        re.escape(catalog.environment_of(backend, devices, "gpu"))
        for backend in catalog.BACKENDS
        for devices in (0, 1)
    ),


def env_mode():
    """conda under --use-conda, a venv per backend otherwise, unless the
    config says which."""
    mode = config["env_mode"]
    if mode == "auto":
        methods = workflow.deployment_settings.deployment_method
        return "conda" if DeploymentMethod.CONDA in methods else "venv"
    return mode


MAIN_ENV = "../../envs/main.yaml"
PUBLISHED_RESULTS = "workflow/resources/published_results.csv"
GPU_PEAKS = "workflow/resources/gpu_peaks.csv"
FIXTURES_CODE = str(PACKAGE / "fixtures.py")


ENV_MODE = env_mode()


def env_file(environment):
    return str(Path(workflow.basedir) / "envs" / f"{environment}.yaml")


def environment_mode(environment):
    """existing where the config names an interpreter for the environment or
    its backend, else the workflow's mode."""
    if matrix.existing_python(config, environment):
        return "existing"
    return ENV_MODE


def env_spec_path(wildcards):
    """The env file, relative: a moved workflow rebuilds nothing."""
    return os.path.relpath(env_file(wildcards.environment))


def env_identity(wildcards):
    """What the env file installs (comments and layout left out): a build or
    check follows a change of this, not the file's time stamp."""
    return envspec.identity(env_file(wildcards.environment))


def existing_interpreter(wildcards):
    return matrix.existing_python(config, wildcards.environment)


def existing_fingerprint(wildcards):
    """Installing or removing a package in an existing interpreter checks it again."""
    return envspec.interpreter_fingerprint(existing_interpreter(wildcards))


def environment_marker(environment):
    """The file a run of this environment waits for: the built venv's
    marker, or the existing interpreter's check; none under conda."""
    mode = environment_mode(environment)
    if mode == "venv":
        return f".venvs/{environment}/ready.json"
    if mode == "existing":
        return f"results/environments/{environment}.json"
    return None


def run_of(wildcards):
    return matrix.Run(
        wildcards.dataset,
        wildcards.model,
        wildcards.backend,
        **{d.name: d.parse(wildcards[d.name]) for d in matrix.DIMENSIONS},
        repeat=int(wildcards.rep),
        machine=wildcards.machine,
    )


def bench_threads(wildcards):
    """The run's CPU threads (Snakemake caps a job's threads at --cores when
    it runs locally)."""
    threads = wildcards.threads
    return os.cpu_count() if threads == "all" else int(threads)


def check_records():
    """The equivalence check's records (dlbench.equivalence)."""
    return [f"{matrix.check_dir(run)}/check.json" for run in CHECK_RUNS]


def inference_records():
    """This machine's inference run records, whose predictions are compared."""
    return [
        f"{matrix.run_dir(run)}/run.json"
        for run in RUNS
        if matrix.workload(config, run.dataset, run.model)["task"] == "infer"
    ]


def workload_table_inputs(wildcards):
    """The summary, and the table that checks the workload's backends
    compute the same: the equivalence check (training) or the predictions
    from the same weights (inference)."""
    inputs = {"summary": "results/summary.csv"}
    checked = {(run.dataset, run.model) for run in CHECK_RUNS}
    task = matrix.workload(config, wildcards.dataset, wildcards.model)["task"]
    if (wildcards.dataset, wildcards.model) in checked:
        inputs["checks"] = "results/tables/equivalence.csv"
    elif task == "infer" and matrix.predictions_compared(config):
        inputs["checks"] = "results/tables/predictions.csv"
    return inputs


def run_records():
    return [f"{matrix.run_dir(run)}/run.json" for run in RUNS]


def import_sources():
    """The imported results folders and archives, as given."""
    return list(config["import_results"])


def import_fingerprint():
    """What the imported folders hold (each record's path, size and time):
    a record added or changed inside a folder, whose own time may not change,
    imports again."""
    found = []
    for source in map(Path, config["import_results"]):
        if source.is_dir():
            for path in sorted(source.rglob("run.json")):
                status = path.stat()
                found.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.sha256("\n".join(found).encode()).hexdigest()


def accuracy_tolerances():
    """Accuracy parity is judged on every workload but those on random labels."""
    return {
        (entry["dataset"], entry["model"]): matrix.accuracy_tolerance(config, entry)
        for entry in config["workloads"]
        if not catalog.speed_only(entry["dataset"])
    }


def all_outputs():
    """The tables and plots, and every run record: Snakemake re-makes a
    missing target, not a missing intermediate file, so a deleted or never
    finished record is run again only as a target."""
    outputs = run_records() + ["results/metrics.csv", "results/summary.csv"]
    for entry in config["workloads"]:
        dataset, model = entry["dataset"], entry["model"]
        outputs.append(f"results/tables/{dataset}_{model}.md")
        outputs += [
            f"results/plots/{dataset}_{model}_{plot}.png"
            for plot in matrix.plots(config, entry)
        ]
    outputs += ["results/tables/lines_of_code.md", "results/plots/lines_of_code.png"]
    outputs += [
        "results/tables/machines.md",
        "results/tables/machine_interaction.md",
        "results/tables/significance.md",
        "results/tables/environment.md",
        "results/plots/relative_speed.png",
        "results/tables/published_comparison.md",
        "results/plots/published_comparison.png",
        "results/tables/utilisation.md",
        "results/plots/utilisation.png",
        "results/tables/cold_start.md",
        "results/plots/cold_start.png",
    ]
    if check_records():
        outputs.append("results/tables/equivalence.md")
    if matrix.predictions_compared(config):
        outputs.append("results/tables/predictions.md")
    if matrix.modes_compared(config):
        outputs += ["results/tables/speedups.md", "results/plots/speedups.png"]
    if abstraction.pairs(set(config["backends"])):
        outputs += [
            "results/tables/abstraction_cost.md",
            "results/plots/abstraction_cost.png",
        ]
    return outputs


def workload_data():
    """The prepared dataset of every configured workload, in config order."""
    return [f"results/data/{dataset}.npz" for dataset, _, _ in WORKLOADS]


def implementations():
    """(dataset, model, task, backend) of every implementation the config
    runs somewhere, for the lines-of-code table."""
    return [
        (entry["dataset"], entry["model"], entry["task"], backend)
        for entry in config["workloads"]
        for backend in matrix.runnable_backends(config, entry)
    ]


def implementation_sources():
    """The source files whose lines are counted, and the counter itself."""
    files = {PACKAGE / "lines.py"} | set((PACKAGE / "layers").glob("*.py"))
    for _, model, _, backend in implementations():
        files.update(
            Path(os.path.relpath(p)) for p in lines.source_files(backend, model)
        )
    return sorted(str(path) for path in files)


# The workflow builds Keras models itself in this environment: to count
# the FLOPs of the user's own models (dlbench.flops_count) and to draw the
# shared initial weights (dlbench.initial_weights), whichever backends run.
KERAS_ON_TORCH = matrix.KERAS_ON_TORCH


def interpreter_available(environment):
    """False only where it is an existing interpreter the config does not name."""
    named = matrix.existing_python(config, environment)
    return environment_mode(environment) != "existing" or bool(named)


def environment_python(environment):
    """The interpreter of an environment in its mode."""
    return {
        "venv": f".venvs/{environment}/bin/python",
        "conda": "python",
        "existing": matrix.existing_python(config, environment),
        "current": sys.executable,
    }[environment_mode(environment)]


def keras_on_torch_available():
    return interpreter_available(KERAS_ON_TORCH)


def keras_on_torch_python():
    return environment_python(KERAS_ON_TORCH)


def keras_model_inputs(wildcards):
    """The prepared data, the Keras definition of the model (a user's file,
    or the workload's folder and the shared Keras layers) and the
    environment that builds it."""
    inputs = {
        "data": f"results/data/{wildcards.dataset}.npz",
        "model": os.path.relpath(workloads.source(wildcards.model, "keras")),
    }
    if not workloads.is_custom(wildcards.model):
        inputs["facts"] = str(PACKAGE / "workloads" / wildcards.model / "__init__.py")
        inputs["layers"] = str(PACKAGE / "layers" / "keras_layers.py")
    marker = environment_marker(KERAS_ON_TORCH)
    if marker:
        inputs["env"] = marker
    return inputs


def counted_flops():
    """The counted FLOPs of every workload of a model of the user's."""
    if not keras_on_torch_available():
        return {}
    return {
        f"{dataset}/{model}": f"results/flops/{dataset}/{model}.json"
        for dataset, model, _ in WORKLOADS
        if workloads.is_custom(model)
    }


def machine_probes():
    """This machine's matrix-product probe for every thread count and
    precision of the config (rule cpu_probe), where keras-torch is at hand."""
    if not keras_on_torch_available():
        return []
    return [
        f"results/probes/{MACHINE}/threads={threads}/precision={precision}.json"
        for threads in matrix.every_dimension_value(config, "threads")
        for precision in matrix.every_dimension_value(config, "precision")
    ]


def probe_inputs(environment):
    """A probe's code and the environment it runs in (rules cpu_probe, gpu_probe)."""
    inputs = {"code": str(PACKAGE / "probe.py")}
    marker = environment_marker(environment)
    if marker:
        inputs["env"] = marker
    return inputs


# The GPU's probe runs in keras-torch's CUDA environment.
TORCH_ON_GPUS = catalog.environment_of(KERAS_ON_TORCH, 1, "gpu")


def gpu_probes():
    """One GPU's matrix-product probe per precision (rule gpu_probe), where
    the config runs on GPUs and keras-torch's CUDA interpreter is at hand."""
    on_gpus = config["accelerator"] == "gpu" and any(
        int(devices) > 0 for devices in matrix.every_dimension_value(config, "devices")
    )
    if not on_gpus or not interpreter_available(TORCH_ON_GPUS):
        return []
    return [
        f"results/probes/{MACHINE}/gpu/precision={precision}.json"
        for precision in matrix.every_dimension_value(config, "precision")
    ]


def flops_count_inputs(wildcards):
    code = str(PACKAGE / "flops_count.py")
    return dict(keras_model_inputs(wildcards), code=code)


def initial_weights_inputs(wildcards):
    code = str(PACKAGE / "initial_weights.py")
    return dict(
        keras_model_inputs(wildcards), code=code, **model_check_input(wildcards)
    )


def model_check_inputs(wildcards):
    return dict(keras_model_inputs(wildcards), code=str(PACKAGE / "model_check.py"))


def model_check_input(wildcards):
    """A model of the user's: its check (rule check_custom_model), before
    anything builds it."""
    if not workloads.is_custom(wildcards.model):
        return {}
    return {"model_check": f"results/models/{wildcards.dataset}/{wildcards.model}.json"}


def trained_weights_inputs(wildcards):
    """The draw the training starts from, the data, and the code that
    trains: Keras' family digest (harness, adapter, layers) and the
    training's own module."""
    return dict(
        keras_model_inputs(wildcards),
        drawn=matrix.WEIGHTS.format(**wildcards),
        family="results/code/keras.sha256",
        code=str(PACKAGE / "trained_weights.py"),
    )


def trained_weights_settings(wildcards):
    """How an inference workload's weights are trained: its trained_weights."""
    entry = matrix.workload(config, wildcards.dataset, wildcards.model)
    return json.dumps(entry["trained_weights"], sort_keys=True)


def custom_model_option(wildcards):
    """``--custom JSON`` for a model of the user's, nothing for a built-in one."""
    entry = config["custom_models"].get(wildcards.model)
    if entry is None:
        return ""
    return f"--custom {shlex.quote(json.dumps(entry, sort_keys=True))}"


def model_check_option(wildcards, input):
    """``--model-check PATH`` where the job's inputs hold a model check."""
    if "model_check" not in input.keys():
        return ""
    return f"--model-check {shlex.quote(input.model_check)}"


# Input functions of the data rules


def prepare_inputs(wildcards):
    """The verified raw files by name, and the preparation code: a change to
    how data is prepared re-makes the prepared file (and the runs on it)."""
    files = catalog.DATASETS[wildcards.dataset]["files"]
    inputs = {name: f"resources/{wildcards.dataset}/{name}" for name in files}
    inputs["code"] = str(PACKAGE / "data.py")
    return inputs


def raw_source(wildcards):
    return catalog.source_of(
        wildcards.dataset, wildcards.filename, config["data_mirror"]
    )


def known_hash(wildcards):
    return catalog.DATASETS[wildcards.dataset]["files"][wildcards.filename]


def hash_record(wildcards):
    """Where the checksum of a file without a published one is recorded on
    first download; outside the download's output, so it outlives the file."""
    return f"resources/checksums/{wildcards.dataset}/{wildcards.filename}.sha256"


# Input functions and parameters of the bench rule


def run_spec(wildcards):
    return json.dumps(matrix.spec(config, run_of(wildcards)), sort_keys=True)


def check_spec(wildcards):
    return json.dumps(matrix.check_spec(config, run_of(wildcards)), sort_keys=True)


def run_environment(wildcards):
    """The backend's CPU environment, or its CUDA one on GPUs."""
    return catalog.environment_of(
        wildcards.backend, int(wildcards.devices), config["accelerator"]
    )


def run_env_file(wildcards):
    """The conda env of a run; none where it runs in an existing interpreter."""
    environment = run_environment(wildcards)
    if environment_mode(environment) == "existing":
        return None
    return env_file(environment)


def bench_inputs(wildcards):
    """The prepared data, the digest of the code the run executes and, in
    venv mode, the run's venv: a change to any re-runs the run."""
    family = catalog.BACKENDS[wildcards.backend]["family"]
    inputs = {
        "data": f"results/data/{wildcards.dataset}.npz",
        "code": f"results/code/{family}.sha256",
    }
    marker = environment_marker(run_environment(wildcards))
    if marker:
        inputs["env"] = marker
    if workloads.is_custom(wildcards.model):
        inputs["model"] = os.path.relpath(workloads.source(wildcards.model, family))
        inputs.update(model_check_input(wildcards))
    weights = matrix.initial_weights_entry(
        config,
        matrix.workload(config, wildcards.dataset, wildcards.model),
        run_of(wildcards),
    )
    if weights:
        inputs["weights"] = weights["initial_weights"]
    return inputs


def backend_python(wildcards):
    return environment_python(run_environment(wildcards))


def family_sources(wildcards):
    """The library files a run of this family executes: the harness and
    what every run imports (import_graph.RUN_CORE, checked against the
    imports), the family's adapters, its shared layers and its
    implementations of the workloads (with the workloads' own facts)."""
    family = wildcards.family
    adapters = {
        catalog.adapter_of(backend)
        for backend, entry in catalog.BACKENDS.items()
        if entry["family"] == family
    }
    files = list(import_graph.RUN_CORE) + [f"layers/{family}_layers.py"]
    for model in workloads.built_in():
        files.append(f"workloads/{model}/__init__.py")
        if workloads.implemented(model, family):
            files.append(f"workloads/{model}/in_{family}.py")
    files += [f"backends/{adapter}_adapter.py" for adapter in sorted(adapters)]
    return [str(PACKAGE / name) for name in files]


def timed_on_gpus(wildcards):
    return int(wildcards.devices) > 0 and config["accelerator"] == "gpu"


# More of cpu_exclusive than any machine provides: Snakemake caps a job's
# resource at the amount --resources gives, so a job asking for this takes
# the whole amount, whatever it is.
WHOLE_CPU = 1_000_000
# A venv build or a data preparation takes one unit: with the two that
# profiles/default provides, two of them share the CPU, never a timed run.
SETUP_SHARE = 1


def cpu_exclusive(wildcards):
    """CPU-timed runs (emulated devices too) take the whole CPU, unless the
    config lets them overlap: then one unit each, so that the machine's
    probe (rule cpu_probe, the whole CPU) never measures beside them."""
    if timed_on_gpus(wildcards):
        return 0
    return SETUP_SHARE if config["concurrent_cpu_runs"] else WHOLE_CPU


def gpus_of_run(wildcards):
    """The run's GPUs as a resource: `--resources gpu=N` locally, the job's
    GPU request on a cluster. The ids come from the supervisor (gpus.py)."""
    return int(wildcards.devices) if timed_on_gpus(wildcards) else 0


def supervisor_python(wildcards):
    """The supervisor needs only the library: in venv mode it runs in this
    environment, so that a backend whose venv could not be built still gets
    a record saying why."""
    in_conda_env = environment_mode(run_environment(wildcards)) == "conda"
    return "python" if in_conda_env else sys.executable


def run_timeout_minutes(wildcards):
    """The workload's own time-out, or the config's."""
    entry = matrix.workload(config, wildcards.dataset, wildcards.model)
    return matrix.timeout_minutes(config, entry)


def run_runtime(wildcards):
    """The job's runtime resource: the run's time-out, rounded up."""
    return math.ceil(run_timeout_minutes(wildcards))


def supervisor_options(wildcards, input):
    options = f"--timeout-minutes {run_timeout_minutes(wildcards)} "
    if config["memory_limit_mb"]:
        options += f"--memory-limit-mb {config['memory_limit_mb']} "
    options += f"--env-mode {environment_mode(run_environment(wildcards))} "
    if "env" in input.keys():
        options += f"--env-marker {shlex.quote(input.env)} "
    if "model_check" in input.keys():
        options += model_check_option(wildcards, input) + " "
    if timed_on_gpus(wildcards):
        options += f"--gpu-wait-minutes {config['gpu_wait_minutes']} "
        if config["gpu_lock_dir"]:
            options += f"--gpu-lock-dir {shlex.quote(config['gpu_lock_dir'])} "
    return options
