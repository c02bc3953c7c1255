"""The workflow through a real single-node SLURM (profiles/slurm): a run
goes end to end as SLURM jobs, and a failing job is reported as failed."""

import json

import pytest
import yaml

import slurm_cluster
from conftest import REPO, copy_workflow, run_snakemake, write_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(slurm_cluster.missing() is not None, reason=str(slurm_cluster.missing())),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    started = slurm_cluster.Cluster(tmp_path_factory.mktemp("slurm")).start()
    yield started
    started.stop()


def one_run_config(workdir, **changes):
    """The smoke config cut to the digits MLP on keras-jax, two epochs."""
    with open(REPO / "config" / "smoke.yaml") as handle:
        config = yaml.safe_load(handle)
    workload = dict(config["workloads"][0], epochs=2, repeats=1)
    config.update(workloads=[workload], backends={"keras-jax": None}, **changes)
    return write_config(workdir / "config" / "slurm.yaml", config)


def through_slurm(cluster, workdir, configfile, dataset="digits"):
    """The run and its workload's table, every job a SLURM job."""
    return run_snakemake(
        workdir,
        "results/tables/{}_mlp.md".format(dataset),
        "--profile",
        str(REPO / "profiles" / "slurm"),
        "--workflow-profile",
        "none",
        "--configfile",
        str(configfile),
        check=False,
        env=cluster.env,
    )


@pytest.fixture
def workdir(tmp_path, built_workflow):
    """A copy of the workflow with the session's keras-jax venv."""
    built_workflow.venv("keras-jax")
    (tmp_path / "workflow").mkdir()
    return copy_workflow(tmp_path / "workflow", built_workflow.path, ["keras-jax"])


def test_a_run_goes_through_slurm(cluster, workdir):
    done = through_slurm(cluster, workdir, one_run_config(workdir))
    assert done.returncode == 0, done.stderr[-5000:] + cluster.logs()
    record = json.loads((workdir / "results/runs/digits/mlp/keras-jax/0/rep1/run.json").read_text())
    assert record["status"] == "ok", record["error"]
    assert record["environment"]["slurm_job_id"]  # it ran inside a SLURM job
    assert (workdir / "results/summary.csv").exists()
    assert "| keras-jax" in (workdir / "results/tables/digits_mlp.md").read_text()
    submitted = [line for line in done.stderr.splitlines() if "SLURM jobid" in line]
    assert len(submitted) >= 5  # prepare, code digest, bench, collect, table


def test_a_failing_job_is_reported_as_failed(cluster, workdir, tmp_path):
    """A download from a mirror that lacks the file fails its SLURM job;
    Snakemake says so and exits non-zero."""
    config = one_run_config(workdir, data_mirror=str(tmp_path / "empty-mirror"))
    with open(config) as handle:
        edited = yaml.safe_load(handle)
    edited["workloads"][0]["dataset"] = "mnist"
    write_config(config, edited)
    done = through_slurm(cluster, workdir, config, dataset="mnist")
    assert done.returncode != 0
    assert "Error in rule download" in done.stderr
    assert not (workdir / "resources/mnist/mnist.npz").exists()
