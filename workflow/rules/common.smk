import re
import sys
from pathlib import Path

from snakemake.common.configfile import load_configfile
from snakemake.exceptions import WorkflowError
from snakemake_interface_executor_plugins.settings import DeploymentMethod

SRC = str(Path(workflow.basedir) / "src")
# On Snakemake's path, the library reaches every script too (Snakemake hands
# its sys.path to them), in whichever environment the script runs.
sys.path.insert(0, SRC)

from dlbench import catalog
from dlbench.data.unfetched import discard_unfetched
from dlbench.environments import variants
from dlbench.plan import (
    comparisons,
    config_sources,
    matrix,
    paths,
    progress,
    scheduling,
    validation,
)
from dlbench.plan.machine_limits import machine_limits
from dlbench.plan.targets import (
    KERAS_ON_TORCH,
    SETUP_SHARE,
    TORCH_ON_GPUS,
    WHOLE_CPU,
    WorkflowTargets,
)
from dlbench.run import integrity


def refuse(message):
    """A config the workflow cannot run: its reason alone, in at most three
    lines, and exit status 1 (an exception would add Snakemake's frames)."""
    print(message, file=sys.stderr)
    sys.exit(1)


SCHEMA = workflow.source_path("../schemas/config.schema.yaml")
CONFIG_SCHEMA = validation.load_schema(SCHEMA)
# The config files (config/config.yaml unless --configfile names others, which
# replace it) and --config, each of its keys replacing the files' whole
# (dlbench.plan.config_sources). Loaded here, not by a configfile directive,
# which would merge a named file into the default's keys.
config_files = workflow.config_settings.configfiles or [
    config_sources.DEFAULT_CONFIG_FILE
]
try:
    combined = config_sources.combine(
        [load_configfile(path) for path in config_files],
        dict(workflow.config_settings.config),
        CONFIG_SCHEMA,
    )
except WorkflowError as error:
    refuse(f"config file: {error}")
config.clear()
config.update(combined)

# Where this machine runs the jobs, it must have the threads and GPUs asked for.
runs_here = workflow.local_exec and not workflow.remote_exec
try:
    limits = validation.validate_config(
        config,
        CONFIG_SCHEMA,
        SCHEMA,
        machine=machine_limits if runs_here else None,
        log_path="logs/config-error.log",
        envs_dir=Path(workflow.basedir) / "envs",
    )
except matrix.ConfigError as error:
    refuse(f"invalid config: {error}")
if runs_here and workflow.is_main_process:
    added = scheduling.missing_resources(workflow.global_resources.keys(), limits[1])
    for name, amount in added.items():
        workflow.register_resource(name, amount)
    if added:
        print(
            "resources the command line left out, as the workflow sets them: "
            + " ".join(f"{name}={amount}" for name, amount in added.items()),
            file=sys.stderr,
        )
# This machine's name, once ("auto": from the host), in every run's path and record.
config["machine"] = matrix.machine_name(config)


def env_mode():
    """conda under --use-conda, a venv per backend otherwise, unless the
    config says which."""
    mode = config["env_mode"]
    if mode == "auto":
        methods = workflow.deployment_settings.deployment_method
        return "conda" if DeploymentMethod.CONDA in methods else "venv"
    return mode


# Targets, inputs and parameters of every rule (dlbench.plan.targets).
targets = WorkflowTargets(config, workflow.basedir, env_mode())
# The targets of `all`, which each rule file extends after its rules.
TARGETS = []

# A data file that no longer matches the seal its rule gave it (truncated,
# overwritten, bits flipped) is discarded before any job starts, so that it
# is made again; nothing reads it. Jobs started by an executor skip this.
if workflow.is_main_process:
    for reason in integrity.discard_if_corrupt(targets.data_files(), full=True):
        print(f"discarded, will be made again: {reason}", file=sys.stderr)
    # A download that failed is tried again when asked (retry_downloads): its
    # files and the records that carry its reason are discarded, so that
    # Snakemake asks for the data again (outputs that exist keep it from
    # asking otherwise). Never by itself: a dry run or a report would lose them.
    discarded = []
    if config["retry_downloads"]:
        discarded = discard_unfetched(
            targets.data_files_by_dataset(), targets.record_folders
        )
    for path in discarded:
        print(f"not fetched last time, tried again: {path}", file=sys.stderr)


RUN_DIR = paths.RUN_DIR.replace("{repeat}", "{rep}")
CHECK_DIR = paths.CHECK_DIR.replace("{repeat}", "{rep}")
PYTHON_STACKS_DIR = paths.PYTHON_STACKS_DIR.replace("{repeat}", "{rep}")
MAIN_ENV = "../../envs/main.yaml"


wildcard_constraints:
    **{dimension.name: dimension.pattern for dimension in matrix.DIMENSIONS},
    dataset="|".join(targets.registry.datasets),
    model="|".join(targets.registry.models),
    backend="|".join(catalog.BACKENDS),
    machine=matrix.MACHINE_PATTERN,
    rep=r"\d+",
    seed=r"\d+",
    filename=r"[^/]+",
    family="|".join({entry["family"] for entry in catalog.BACKENDS.values()}),
    environment="(?:{})(?:{}(?:{}))?".format(
        "|".join(
            re.escape(entry.environment(devices, "gpu"))
            for entry in catalog.BACKENDS.values()
            for devices in (0, 1)
        ),
        variants.SEPARATOR,
        variants.LABEL_PATTERN,
    ),


def records_to_make():
    """The run records this invocation makes: those of the bench jobs
    Snakemake's DAG will run (every planned one if it cannot say)."""
    try:
        jobs = workflow.dag.needrun_jobs()
        return sorted(str(job.output[0]) for job in jobs if job.rule.name == "bench")
    except AttributeError:
        return targets.run_records()
