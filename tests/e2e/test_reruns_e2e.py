"""Re-running only what changed, on a private copy of the session's workflow
after its run (its results, Snakemake's records of them, its venvs linked):
an edit of an environment file plans exactly that backend's runs, and an
edit of a model of your own plans exactly its cells."""

import json
import shutil

import pytest

from dlbench.plan import matrix
from testkit import copy_workflow, run_snakemake
from workflows import TEST_CONFIG, load_test_config

CONFIG = matrix.normalise(load_test_config())
EXAMPLE = "examples/imdb_transformer.py"


def snakemake(workdir, *args):
    return run_snakemake(workdir, "--configfile", TEST_CONFIG, *args)


def pending(workdir):
    """Every output Snakemake plans to (re)make."""
    summary = snakemake(workdir, "--summary").stdout
    rows = [line.split("\t") for line in summary.splitlines()[1:]]
    return sorted(path for path, *rest in rows if rest and rest[-1] != "no update")


def runs_in(paths):
    """(model, backend) of every run record in ``paths``."""
    return sorted(
        {
            (path.split("/")[4], path.split("/")[5])
            for path in paths
            if path.startswith("results/runs/") and path.endswith("run.json")
        }
    )


def pending_runs(workdir):
    """(model, backend) of every run record Snakemake plans to (re)make."""
    return runs_in(pending(workdir))


@pytest.fixture(scope="module")
def workdir(ran_workflow, tmp_path_factory):
    """The ran workflow's files, results and Snakemake metadata, copied with
    their times; its venvs and prepared data linked (nothing here makes them
    again; an edited model of your own draws its weights again)."""
    venvs = sorted(path.name for path in (ran_workflow / ".venvs").iterdir())
    copy = copy_workflow(
        tmp_path_factory.mktemp("reruns") / "workflow", ran_workflow, venvs, source=ran_workflow
    )
    linked = ("data",)
    results = ran_workflow / "results"
    shutil.copytree(
        results, copy / "results", ignore=lambda folder, _: linked if folder == str(results) else ()
    )
    for name in linked:
        (copy / "results" / name).symlink_to(ran_workflow / "results" / name)
    for kept in ("resources", ".snakemake/metadata"):
        shutil.copytree(ran_workflow / kept, copy / kept, symlinks=True)
    assert pending_runs(copy) == []
    return copy


def test_an_env_file_edit_plans_exactly_that_backends_runs(workdir):
    """A comment is not what an environment installs: nothing is planned.
    A pin added (of a package the venv holds already) plans that venv and
    exactly that backend's cells."""
    env_file = workdir / "envs/keras-openvino.yaml"
    original = env_file.read_text()
    try:
        env_file.write_text("# edited: a comment only\n" + original)
        assert pending_runs(workdir) == []
        held = json.loads((workdir / ".venvs/keras-openvino/ready.json").read_text())
        (pin,) = [line for line in held["pip_freeze"] if line.startswith("namex==")]
        env_file.write_text(original.replace("  - pip:\n", "  - pip:\n      - {}\n".format(pin)))
        assert pending_runs(workdir) == sorted(
            {
                (run.model, run.backend)
                for run in matrix.runs(CONFIG)
                if run.backend == "keras-openvino"
            }
        )
    finally:
        env_file.write_text(original)


def test_editing_your_model_plans_exactly_its_cells(workdir):
    """An edit of the model's file plans its cells and a new count of its
    FLOPs, nothing else. (That a run's record names the file's digest is
    test_workflow_e2e's, and that an edit changes the spec's digest
    tests/unit/test_custom_models.py's: Snakemake makes what it plans.)"""
    example = workdir / EXAMPLE
    original = example.read_text()
    try:
        example.write_text(original.replace("DROPOUT = 0.1", "DROPOUT = 0.2"))
        own = sorted(
            {
                (run.model, run.backend)
                for run in matrix.runs(CONFIG)
                if run.model == "imdb_transformer"
            }
        )
        planned = pending(workdir)
        assert own and runs_in(planned) == own
        assert "results/flops/imdb_tiny/imdb_transformer.json" in planned
    finally:
        example.write_text(original)
    assert pending_runs(workdir) == []
