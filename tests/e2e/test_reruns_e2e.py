"""Re-running only what changed, on a private copy of the session's workflow
after its run (its results, Snakemake's records of them, its venvs linked):
an edit of an environment file plans exactly that backend's runs, and an
edit of a model of your own re-runs exactly its cells."""

import hashlib
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


def pending_runs(workdir):
    """(model, backend) of every run record Snakemake plans to (re)make."""
    summary = snakemake(workdir, "--summary").stdout
    lines = [line.split("\t") for line in summary.splitlines() if line.startswith("results/runs/")]
    return sorted(
        {
            (path.split("/")[4], path.split("/")[5])
            for path, *rest in lines
            if path.endswith("run.json") and rest[-1] != "no update"
        }
    )


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


def started(workdir):
    return {
        run: json.loads((workdir / matrix.run_dir(run) / "run.json").read_text())["started"]
        for run in matrix.runs(CONFIG)
    }


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


def test_editing_your_model_reruns_exactly_its_cells(workdir):
    """An edit of the model's file re-runs its cells and re-counts its FLOPs,
    nothing else; the records name the new file's digest."""
    example = workdir / EXAMPLE
    example.write_text(example.read_text().replace("DROPOUT = 0.1", "DROPOUT = 0.2"))
    own = sorted(
        {(run.model, run.backend) for run in matrix.runs(CONFIG) if run.model == "imdb_transformer"}
    )
    assert own and pending_runs(workdir) == own
    flops_file = workdir / "results/flops/imdb_tiny/imdb_transformer.json"
    counted_before = flops_file.stat().st_mtime_ns
    before = started(workdir)
    records = [matrix.run_dir(run) + "/run.json" for run in matrix.runs(CONFIG)]
    snakemake(workdir, "-j2", *records, str(flops_file.relative_to(workdir)))  # not the tables
    after = started(workdir)
    changed = sorted({(run.model, run.backend) for run in before if before[run] != after[run]})
    assert changed == own
    assert flops_file.stat().st_mtime_ns != counted_before
    digest = hashlib.sha256(example.read_bytes()).hexdigest()
    for run in matrix.runs(CONFIG):
        if run.model == "imdb_transformer":
            found = json.loads((workdir / matrix.run_dir(run) / "run.json").read_text())
            assert found["custom_model"]["sha256"] == digest and found["status"] == "ok"
    assert pending_runs(workdir) == []
