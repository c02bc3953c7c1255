"""The workflow's plan as library functions (dlbench.plan.targets), without
Snakemake: targets, rule inputs and parameters, environments, the code
digests' files. workflow/rules/common.smk makes one WorkflowTargets (``targets``)
and the rules call it; the end-to-end tier runs them through Snakemake."""

import copy
import os
import shlex
import subprocess
import sys

import pytest
import yaml
from snakemake.utils import validate

from dlbench import catalog
from dlbench.plan import import_graph, matrix, targets
from testkit import REPO

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")


class Wildcards(dict):
    """A job's wildcards as Snakemake gives them: by name and as attributes."""

    __getattr__ = dict.__getitem__


def plan_of(name, env_mode="venv", **changes):
    config = yaml.safe_load((REPO / "config" / name).read_text())
    config = copy.deepcopy(dict(config, **changes))
    validate(config, SCHEMA)
    config["machine"] = "box"
    return targets.WorkflowTargets(config, REPO, env_mode)


@pytest.fixture(scope="module", autouse=True)
def in_the_repository():
    """Paths are relative to the working directory, as Snakemake's are."""
    before = os.getcwd()
    os.chdir(REPO)
    yield
    os.chdir(before)


def bench_wildcards(run):
    fields = {d.name: str(getattr(run, d.name)) for d in matrix.DIMENSIONS}
    return Wildcards(
        dataset=run.dataset,
        model=run.model,
        backend=run.backend,
        rep=str(run.repeat),
        machine=run.machine,
        **fields,
    )


def test_a_runs_inputs_are_its_data_code_environment_and_weights():
    plan = plan_of("test.yaml")
    run = next(r for r in plan.runs if r.model == "mlp" and r.backend == "keras-jax")
    wildcards = bench_wildcards(run)
    assert plan.run_of(wildcards) == run
    inputs = plan.bench_inputs(wildcards)
    assert inputs["data"] == "results/data/digits.npz"
    assert inputs["code"] == "results/code/keras.sha256"
    assert inputs["env"] == ".venvs/keras-jax/ready.json"
    assert inputs["weights"] == "results/weights/digits/mlp/seed42.npz"
    assert plan.backend_python(wildcards) == ".venvs/keras-jax/bin/python"
    spec = yaml.safe_load(plan.run_spec(wildcards))
    assert spec["backend"] == "keras-jax" and spec["hyper"]["epochs"] == 4
    options = shlex.split(plan.supervisor_options(wildcards, Wildcards(inputs)))
    assert options[options.index("--env-mode") + 1] == "venv"
    assert options[options.index("--env-marker") + 1] == inputs["env"]


def test_under_conda_a_run_has_no_venv_and_the_supervisor_runs_in_its_env():
    plan = plan_of("test.yaml", env_mode="conda")
    wildcards = bench_wildcards(plan.runs[0])
    assert "env" not in plan.bench_inputs(wildcards)
    assert plan.supervisor_python(wildcards) == "python"
    assert plan.run_env_file(wildcards).endswith("envs/{}.yaml".format(plan.runs[0].backend))


def test_an_existing_interpreter_is_used_where_the_config_names_one(tmp_path):
    plan = plan_of("test.yaml", existing_environments={"native-torch": "/usr/bin/python3"})
    assert plan.environment_mode("native-torch") == "existing"
    assert plan.environment_python("native-torch") == "/usr/bin/python3"
    assert plan.environment_marker("native-torch") == "results/environments/native-torch.json"
    assert plan.environment_mode("keras-jax") == "venv"


def test_a_familys_digest_holds_what_its_runs_import_and_no_other_familys():
    plan = plan_of("smoke-full.yaml")
    files = plan.family_sources(Wildcards(family="torch"))
    assert all(not os.path.isabs(path) and os.path.isfile(path) for path in files)
    relative = {os.path.relpath(path, plan.package) for path in files}
    assert set(import_graph.run_core()) <= relative
    assert "run/backends/native_torch_adapter.py" in relative
    assert "models/layers/torch_layers.py" in relative
    assert "models/workloads/mlp/in_torch.py" in relative
    assert not [path for path in relative if "jax" in path or "keras" in path]


def test_cpu_timed_runs_take_the_whole_cpu_unless_the_config_lets_them_overlap():
    alone, overlapping = plan_of("smoke-full.yaml"), plan_of("test.yaml")
    run = Wildcards(devices="0")
    assert alone.cpu_exclusive(run) == targets.WHOLE_CPU
    assert overlapping.cpu_exclusive(run) == targets.SETUP_SHARE
    assert alone.gpus_of_run(run) == 0


def test_one_job_at_a_time_fills_a_compile_cache():
    """Theano and PyTensor compile ops into a cache of their environment
    that one process at a time fills; each such cache is a resource of one
    unit in both profiles, and the runs of its backend take it (a dry run:
    tests/unit/test_parallel.py)."""
    caches = {
        backend: entry["compile_cache"]
        for backend, entry in catalog.BACKENDS.items()
        if "compile_cache" in entry
    }
    assert caches == {"keras2-theano": "theano", "native-pytensor": "pytensor"}
    for profile in ("default", "slurm"):
        provided = yaml.safe_load((REPO / "profiles" / profile / "config.yaml").read_text())
        for cache in caches.values():
            assert provided["resources"][cache + "_compile_cache"] == 1, profile
    theano = targets.WorkflowTargets.compile_cache_share("theano")
    assert theano(Wildcards(backend="keras2-theano")) == 1
    assert theano(Wildcards(backend="native-pytensor")) == 0
    assert theano(Wildcards(backend="keras-jax")) == 0


def test_the_machine_is_probed_at_the_threads_and_precisions_its_runs_take():
    """CIFAR's CNN in the tests' config: threads 1 and 2 in float32,
    bfloat16 on one thread only (two threads are left out): three probes,
    not every pair; with nothing left out, all four."""
    probed = "results/probes/box/threads={}/precision={}.json"
    taken = [("1", "float32"), ("1", "mixed_bfloat16"), ("2", "float32")]
    assert sorted(plan_of("test.yaml").machine_probes()) == [probed.format(*p) for p in taken]
    config = yaml.safe_load((REPO / "config" / "test.yaml").read_text())
    everything = plan_of("test.yaml", exclude=config["exclude"][:1]).machine_probes()
    assert sorted(everything) == sorted(
        [probed.format(*p) for p in taken] + [probed.format("2", "mixed_bfloat16")]
    )


def test_the_gpu_probes_only_where_the_config_runs_on_gpus():
    assert plan_of("smoke-full.yaml").gpu_probes() == []
    on_gpus = plan_of("gpu.yaml").gpu_probes()
    assert on_gpus and all(path.startswith("results/probes/box/gpu/") for path in on_gpus)


def test_a_model_of_your_own_is_checked_before_anything_builds_it():
    plan = plan_of("test.yaml")
    own = Wildcards(dataset="imdb_tiny", model="imdb_transformer", seed="42")
    assert plan.model_check_input(own) == {
        "model_check": "results/models/imdb_tiny/imdb_transformer.json"
    }
    assert plan.initial_weights_inputs(own)["model"] == "examples/imdb_transformer.py"
    checked = plan.model_check_input(own)["model_check"]
    assert plan.flops_count_inputs(own)["model_check"] == checked
    assert plan.custom_model_option(own).startswith("--custom ")
    built_in = Wildcards(dataset="digits", model="mlp", seed="42")
    assert plan.model_check_input(built_in) == {} and plan.custom_model_option(built_in) == ""
    assert plan.keras_model_inputs(built_in)["facts"].endswith("models/workloads/mlp/__init__.py")


def test_the_plan_imports_no_pandas():
    """Every Snakemake invocation parses the workflow, the plan with it: a
    dry run should not pay for pandas (a second of CPU), which only the
    rules' scripts need."""
    done = subprocess.run(
        [sys.executable, "-c", "import sys, dlbench.plan.targets; print('pandas' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(REPO / "src")),
    )
    assert done.stdout.strip() == "False"
