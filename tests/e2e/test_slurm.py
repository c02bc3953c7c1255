"""The workflow through a real single-node SLURM (profiles/slurm): a run
goes end to end as SLURM jobs under the profile's machine name, its results
merge with a local run's in one report, and a failing job is reported as
failed."""

import json
import os
import socket

import pandas as pd
import pytest
import yaml

import slurm_cluster
from dlbench import catalog
from testkit import MACHINE, REPO, copy_workflow, run_json, run_snakemake, write_config

PROFILE = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
SLURM_MACHINE = dict(item.split("=", 1) for item in PROFILE["config"])["machine"]
pytestmark = [
    pytest.mark.early,
    pytest.mark.skipif(slurm_cluster.missing() is not None, reason=str(slurm_cluster.missing())),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The cluster, and Snakemake's SLURM plugins on the path of every
    Snakemake it starts (SLURM passes the environment on to its jobs)."""
    plugins = slurm_cluster.install_executor_plugin(tmp_path_factory.mktemp("plugins"), REPO)
    started = slurm_cluster.Cluster(tmp_path_factory.mktemp("slurm")).start()
    started.env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [plugins, started.env.get("PYTHONPATH")])
    )
    yield started
    started.stop()


# one thread a run: two-thread runs beside the session's others wait on each other
THREADS = 1
BABI_FILE = next(iter(catalog.DATASETS["babi"]["files"]))


def one_run_config(workdir, **changes):
    """The smoke config cut to the digits MLP on keras-jax, two epochs. One
    backend: its own initial weights, and no equivalence check (one backend
    has nothing to be compared with; each would be two SLURM jobs more, and
    the draw a Keras on torch more, 51 s of CPU on a Zen 3)."""
    with open(REPO / "config" / "smoke-full.yaml") as handle:
        config = yaml.safe_load(handle)
    workload = dict(config["workloads"][0], epochs=2, repeats=1)
    config.update(
        workloads=[workload],
        backends={"keras-jax": None},
        threads=THREADS,
        initial_weights="own",
        equivalence_check={"steps": 0},
        **changes,
    )
    return write_config(workdir / "config" / "slurm.yaml", config)


def through_slurm(cluster, workdir, configfile, table="digits_mlp"):
    """The run and its workload's table, every job a SLURM job."""
    return run_snakemake(
        workdir,
        "results/tables/{}.md".format(table),
        "--profile",
        str(REPO / "profiles" / "slurm"),
        "--workflow-profile",
        "none",
        "--configfile",
        str(configfile),
        check=False,
        env=cluster.env,
    )


# The run's backend.
LINKED = ["keras-jax"]


@pytest.fixture
def workdir(tmp_path, built_workflow):
    """A copy of the workflow with the session's venvs it needs."""
    for environment in LINKED:
        built_workflow.venv(environment)
    (tmp_path / "workflow").mkdir()
    return copy_workflow(tmp_path / "workflow", built_workflow.path, LINKED)


def test_a_run_goes_through_slurm_and_merges_with_a_local_one(cluster, workdir):
    done = through_slurm(cluster, workdir, one_run_config(workdir))
    assert done.returncode == 0, done.stderr[-5000:] + cluster.logs()
    on_cluster = workdir / run_json(
        "digits", "mlp", "keras-jax", machine=SLURM_MACHINE, threads=THREADS
    )
    record = json.loads(on_cluster.read_text())
    assert record["status"] == "ok", record["error"]
    assert record["runtime"]["slurm_job_id"]  # it ran inside a SLURM job
    assert record["machine"] == SLURM_MACHINE and record["node"] == socket.gethostname()
    assert (workdir / "results/summary.csv").exists()
    assert "| keras-jax" in (workdir / "results/tables/digits_mlp.md").read_text()
    submitted = [line for line in done.stderr.splitlines() if "SLURM jobid" in line]
    assert len(submitted) >= 5  # prepare, code digest, bench, collect, table
    # The same config run here imports the cluster's results folder: both
    # machines' cells in the summary and the comparison, the cluster's files
    # untouched.
    cluster_results = workdir / "results" / "runs" / SLURM_MACHINE
    before = {p: p.read_bytes() for p in cluster_results.rglob("*") if p.is_file()}
    merged = one_run_config(workdir, import_results=[str(cluster_results)])
    run_snakemake(workdir, "--configfile", str(merged), "-j2", "results/tables/machines.md")
    summary = pd.read_csv(workdir / "results" / "summary.csv")
    assert sorted(summary["machine"]) == sorted([SLURM_MACHINE, MACHINE])
    comparison = pd.read_csv(workdir / "results" / "tables" / "machines.csv")
    assert set(comparison["machine"]) == {SLURM_MACHINE, MACHINE}
    assert comparison["ratio_to_reference"].notna().all()
    assert {p: p.read_bytes() for p in cluster_results.rglob("*") if p.is_file()} == before


def test_a_failing_job_is_reported_as_failed(cluster, workdir, tmp_path):
    """A dataset whose archive cannot be read fails its preparation's SLURM
    job; Snakemake says so and exits non-zero. (bAbI has no published
    checksum, so the mirror's broken file is taken; a download that fails
    is no failed job: its cells are unavailable, test_unavailable_data.py.)"""
    mirror = tmp_path / "broken-mirror"
    mirror.mkdir()
    (mirror / BABI_FILE).write_bytes(b"not an archive")
    config = one_run_config(workdir, data_mirror=str(mirror))
    with open(config) as handle:
        edited = yaml.safe_load(handle)
    smoke = yaml.safe_load((REPO / "config" / "smoke-full.yaml").read_text())
    (babi,) = [entry for entry in smoke["workloads"] if entry["model"] == "babi_rnn"]
    edited["workloads"] = [dict(babi, dataset="babi", epochs=1, repeats=1, backends=["keras-jax"])]
    write_config(config, edited)
    done = through_slurm(cluster, workdir, config, table="babi_babi_rnn")
    assert done.returncode != 0
    assert "Error in rule prepare" in done.stderr
    assert not (workdir / "results/data/babi.npz").exists()
