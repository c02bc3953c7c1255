"""The run spec, typed once (dlbench.record.run_spec.RunSpec): what the
workflow writes into a run's params is the JSON it always wrote, key for key
and in the same order (Snakemake re-runs a cell whose params changed), and
what the harness reads back is refused when it holds a key no field takes."""

import copy
import json

import pytest
import yaml
from snakemake.utils import validate
from test_targets import SCHEMA, bench_wildcards

from dlbench import catalog
from dlbench.plan import comparisons, matrix, run_spec, targets
from dlbench.record.run_spec import JSON_ORDER, OPTIONAL_BLOCKS, RunSpec
from test_harness import spec_json
from testkit import REPO


def plan_of(name):
    config = copy.deepcopy(yaml.safe_load((REPO / "config" / name).read_text()))
    validate(config, SCHEMA)
    config["machine"] = "box"
    return targets.WorkflowTargets(config, REPO, "venv")


def as_before(config, run):
    """The dict plan.run_spec.spec built before the RunSpec, key for key and
    in its order; and last, the one key added since, a time-to-accuracy
    workload's evaluate_every (absent everywhere else, so nothing else
    re-runs)."""
    entry = matrix.workload(config, run.dataset, run.model)
    hyper, parallel = run_spec.data_parallel(config, entry, int(run.devices), run.backend)
    return {
        "machine": run.machine,
        "dataset": run.dataset,
        "model": run.model,
        "backend": run.backend,
        **{d.name: d.parse(getattr(run, d.name)) for d in matrix.DIMENSIONS},
        "dimensions": list(matrix.DIMENSION_NAMES),
        "repeat": int(run.repeat),
        "task": entry["task"],
        "seed": config["seed"] + int(run.repeat) - 1,
        "validate_every_epoch": config["validate_every_epoch"],
        "hyper": hyper,
        "parallel": parallel,
        "environment": run_spec.run_environment(config, run),
        "backend_settings": dict(
            matrix.backend_settings(config, entry, run.backend),
            **catalog.BACKENDS[run.backend].compile_settings(run.compile),
        ),
        "op_profile": run_spec.workload_chosen(config.get("op_profile", True), entry),
        **run_spec.custom_model_entry(config, run.model),
        **run_spec.initial_weights_entry(config, entry, run),
        **(
            {"evaluate_every": entry["time_to_accuracy"]["evaluate_every"]}
            if entry.get("time_to_accuracy")
            else {}
        ),
    }


@pytest.fixture(scope="module", autouse=True)
def in_the_repository():
    """Paths are relative to the working directory, as Snakemake's are."""
    import os

    before = os.getcwd()
    os.chdir(REPO)
    yield
    os.chdir(before)


@pytest.mark.parametrize("name", ["smoke.yaml", "test.yaml"])
def test_every_runs_spec_is_the_json_the_workflow_always_wrote(name):
    plan = plan_of(name)
    assert plan.runs and plan.check_runs
    for run in plan.runs:
        spec, before = run_spec.spec(plan.config, run), as_before(plan.config, run)
        assert isinstance(spec, RunSpec)
        assert spec.as_json() == before, run
        assert list(spec.as_json()) == list(before), run  # the order of its keys too
        assert RunSpec.from_json(json.loads(json.dumps(spec.as_json()))) == spec
        # the bench rule's params: what Snakemake compares to re-run a cell
        assert plan.run_spec(bench_wildcards(run)) == json.dumps(before, sort_keys=True)
    steps = comparisons.check_settings(plan.config)["steps"]
    for run in plan.check_runs:
        spec = run_spec.check_spec(plan.config, run)
        before = dict(as_before(plan.config, run), task="check", check_steps=steps)
        before.pop("evaluate_every", None)  # a check takes its steps without evaluations
        assert spec.as_json() == before and list(spec.as_json()) == list(before), run
        assert plan.check_spec(bench_wildcards(run)) == json.dumps(before, sort_keys=True)


def test_a_key_no_field_takes_is_refused_by_name():
    with pytest.raises(ValueError, match=r"run spec: unknown key\(s\) epochs, sed; a run spec "):
        RunSpec.from_json(dict(spec_json("numpy-test"), epochs=3, sed=7))
    without = {k: v for k, v in spec_json("numpy-test").items() if k not in ("seed", "hyper")}
    with pytest.raises(ValueError, match=r"run spec: missing key\(s\) seed, hyper$"):
        RunSpec.from_json(without)
    with pytest.raises(ValueError, match=r"unknown dimension\(s\) cores"):
        RunSpec.from_json(dict(spec_json("numpy-test"), dimensions=["devices", "cores"]))
    with pytest.raises(TypeError, match="a run spec is a JSON object, not list"):
        RunSpec.from_json(list(spec_json("numpy-test").items()))


def test_a_spec_without_the_optional_keys_takes_the_harness_defaults():
    """The defaults are those the harness took for a key a spec left out;
    the optional blocks stay out of its JSON."""
    least = {"dataset": "digits", "model": "mlp", "backend": "keras-jax", "seed": 1, "hyper": {}}
    spec = RunSpec.from_json(least)
    assert (spec.precision, spec.dimensions, spec.validate_every_epoch) == (
        "float32",
        ("devices",),
        True,
    )
    assert (spec.machine, spec.parallel, spec.environment, spec.op_profile) == (
        None,
        None,
        None,
        False,
    )
    assert not set(OPTIONAL_BLOCKS) & set(spec.as_json())
    assert RunSpec.from_json(spec.as_json()) == spec
    check = spec._replace(task="check", check_steps=4).as_json()
    assert (check["task"], list(check)[-1], check["check_steps"]) == ("check", "check_steps", 4)


def test_every_dimension_is_a_field_with_the_matrixs_default():
    assert set(JSON_ORDER) == set(RunSpec._fields)
    for dimension in matrix.DIMENSIONS:
        assert RunSpec._field_defaults[dimension.name] == dimension.default, dimension.name
