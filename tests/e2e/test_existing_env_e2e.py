"""Backends run in interpreters that were already there (env_mode existing):
the built venvs of the session stand for a user's own environments. digits
mlp on native-torch in keras-torch's interpreter (whose torch differs from a
pin this test writes into native-torch's env file), on keras-jax in
native-jax's interpreter (no Keras: refused) and on native-jax in its own."""

import json

import pandas as pd
import pytest
import yaml

from testkit import REPO, copy_workflow, run_json, run_snakemake, write_config

BACKENDS = ["native-torch", "keras-jax", "native-jax"]
PIN = "torch==2.13.0+cpu"
OTHER_PIN = "torch==2.12.1+cpu"
DIFFERENCE = "torch 2.13.0+cpu (env file: ==2.12.1+cpu)"
# one thread a run: two-thread runs beside the session's others wait on each other
THREADS = 1
TARGETS = [run_json("digits", "mlp", backend, threads=THREADS) for backend in BACKENDS] + [
    "results/tables/environment.csv",
    "results/tables/digits_mlp.csv",
]


def existing_config(workdir, interpreters):
    smoke = yaml.safe_load((REPO / "config" / "smoke-full.yaml").read_text())
    (mlp,) = [entry for entry in smoke["workloads"] if entry["model"] == "mlp"]
    config = dict(
        smoke,
        threads=THREADS,
        backends={backend: smoke["backends"].get(backend) for backend in BACKENDS},
        workloads=[dict(mlp, epochs=2, repeats=1, backends=BACKENDS)],
        env_mode="existing",
        existing_environments=interpreters,
        initial_weights="own",  # shared ones are drawn on keras-torch, not named here
    )
    return str(write_config(workdir / "config" / "existing.yaml", config))


def snakemake(workdir, *args):
    return run_snakemake(workdir, "--configfile", "config/existing.yaml", *args)


def pending(workdir):
    """The run records and environment checks Snakemake plans to (re)make."""
    summary = snakemake(workdir, "--summary", *TARGETS).stdout
    rows = [line.split("\t") for line in summary.splitlines()[1:]]
    return sorted(
        row[0]
        for row in rows
        if row[-1] != "no update"
        and (row[0].endswith("run.json") or row[0].startswith("results/environments/"))
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, built_workflow):
    interpreters = {
        "native-torch": str(built_workflow.venv("keras-torch") / "bin" / "python"),
        "keras-jax": str(built_workflow.venv("native-jax") / "bin" / "python"),
        "native-jax": str(built_workflow.venv("native-jax") / "bin" / "python"),
    }
    workdir = copy_workflow(tmp_path_factory.mktemp("existing") / "workflow")
    env_file = workdir / "envs" / "native-torch.yaml"
    env_file.write_text(env_file.read_text().replace(PIN, OTHER_PIN))
    existing_config(workdir, interpreters)
    snakemake(workdir, "-j2", *TARGETS)
    return workdir


def record(workdir, backend):
    return json.loads((workdir / run_json("digits", "mlp", backend, threads=THREADS)).read_text())


def checked(workdir, environment):
    return json.loads((workdir / "results/environments/{}.json".format(environment)).read_text())


def test_no_environment_is_built(workdir):
    assert not (workdir / ".venvs").exists()


def test_each_interpreter_is_checked_against_its_env_file(workdir):
    torch = checked(workdir, "native-torch")
    assert (torch["status"], torch["mismatches"]) == ("ok", [DIFFERENCE])
    assert torch["versions"]["framework_version"] == "2.13.0+cpu"
    assert torch["installed"]["torch"] == "2.13.0+cpu"
    jax = checked(workdir, "native-jax")
    assert (jax["status"], jax["mismatches"]) == ("ok", [])
    keras = checked(workdir, "keras-jax")
    assert keras["status"] == "unavailable"
    assert (
        "cannot set up keras-jax: ModuleNotFoundError: No module named 'keras'" in (keras["reason"])
    )


def test_runs_carry_the_check_and_a_missing_framework_refuses_only_its_backend(workdir):
    torch = record(workdir, "native-torch")
    assert torch["status"] == "ok"
    assert torch["environment_check"]["mode"] == "existing"
    assert torch["environment_check"]["mismatches"] == [DIFFERENCE]
    assert torch["runtime"]["python_executable"] == checked(workdir, "native-torch")["python"]
    assert record(workdir, "native-jax")["status"] == "ok"
    assert record(workdir, "native-jax")["environment_check"]["mismatches"] == []
    keras = record(workdir, "keras-jax")
    assert keras["status"] == "unavailable"
    assert "No module named 'keras'" in keras["reason"]


def test_tables_show_what_differs_from_the_pins(workdir):
    environment = pd.read_csv(workdir / "results/tables/environment.csv").set_index("backend")
    assert set(environment["environment from"]) == {"existing"}
    assert environment.loc["native-torch", "differs from the env file"] == DIFFERENCE
    assert pd.isna(environment.loc["native-jax", "differs from the env file"])
    workload = pd.read_csv(workdir / "results/tables/digits_mlp.csv").set_index("backend")
    assert workload.loc["native-torch", "NOT the pinned environment"] == DIFFERENCE
    assert workload.loc["keras-jax", "NOT the pinned environment"].startswith("keras: not")


def test_a_comment_checks_nothing_again_and_a_pin_plans_exactly_its_backend(workdir):
    """The pin made to match the interpreter plans its check and its run
    again, nothing else. (What the check then says, no mismatch, is
    native-jax's above: Snakemake makes what it plans.)"""
    env_file = workdir / "envs" / "native-torch.yaml"
    original = env_file.read_text()
    try:
        env_file.write_text("# a comment changes nothing it installs\n" + original)
        assert pending(workdir) == []
        env_file.write_text(original.replace(OTHER_PIN, PIN))
        assert pending(workdir) == [
            "results/environments/native-torch.json",
            run_json("digits", "mlp", "native-torch", threads=THREADS),
        ]
    finally:
        env_file.write_text(original)
