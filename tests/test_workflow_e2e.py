"""The workflow for real: Snakemake on the offline smoke config, all three
Keras 3 backends in their own venvs, then the re-run rules.

The tests of this module share one working copy and run in order.
"""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from conftest import copy_workflow, write_config
from dlbench import catalog

pytestmark = pytest.mark.e2e

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
BACKENDS = ["keras-jax", "keras-tensorflow", "keras-torch"]
MODELS = ["cnn", "mlp"]


def snakemake(workdir, *args, check=True, timeout=1800):
    done = subprocess.run(
        [SNAKEMAKE, "--configfile", "config/smoke.yaml", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and done.returncode != 0:
        raise AssertionError(
            "snakemake {} failed:\n{}\n{}".format(args, done.stdout, done.stderr[-6000:])
        )
    return done


def pending_runs(workdir, *args):
    """(model, backend) of every run record Snakemake plans to (re)make."""
    summary = snakemake(workdir, "--summary", *args).stdout
    lines = [line.split("\t") for line in summary.splitlines() if line.startswith("results/runs/")]
    return sorted(
        (Path(cells[0]).parts[3], Path(cells[0]).parts[4])
        for cells in lines
        if cells[0].endswith("run.json") and cells[-1] != "no update"
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("workflow"))
    snakemake(workdir, "-j2")
    return workdir


def load_record(workdir, model, backend):
    path = workdir / "results/runs/digits/{}/{}/0/rep1/run.json".format(model, backend)
    return json.loads(path.read_text())


def test_smoke_run_writes_a_complete_record_per_run(workdir):
    for model in MODELS:
        for backend in BACKENDS:
            record = load_record(workdir, model, backend)
            assert record["status"] == "ok", record.get("error")
            assert record["parameters"] == catalog.MODELS[model]["parameters"]
            assert record["environment"]["keras_backend"] == backend.split("-", 1)[1]
            assert record["environment"]["python_executable"].startswith(
                str(workdir / ".venvs" / backend)
            )
            assert len(record["epochs"]) == record["hyper"]["epochs"]
            assert record["first_epoch_seconds"] > 0 and record["steady_epoch_seconds"] > 0
            assert record["test_accuracy"] > 0.5  # digits, a few epochs: well above chance (0.1)
            assert record["settings"]["threads"] == record["environment"]["threads"]


def test_inference_run_records(workdir):
    for backend in BACKENDS:
        record = load_record(workdir, "lenet", backend)
        assert record["status"] == "ok", record.get("error")
        assert record["task"] == "infer" and record["parameters"] == 431080
        assert len(record["latencies_ms"]) == 100
        assert 0 < record["latency_ms"]["p50"] <= record["latency_ms"]["p99"]
        assert record["samples_per_second"] > 0
    assert (workdir / "results/plots/digits_lenet_latency.png").read_bytes()[:4] == b"\x89PNG"
    table = (workdir / "results/tables/digits_lenet.md").read_text()
    assert "p50 latency ms" in table and all("| " + b in table for b in BACKENDS)


def test_every_model_has_its_published_parameter_count(workdir):
    """Each catalog model built by real Keras (keras-jax venv) on its own
    dataset's input."""
    script = (
        "import json, os, sys; os.environ['KERAS_BACKEND'] = 'jax'; import keras\n"
        "from dlbench import catalog\n"
        "from dlbench.models import keras_models\n"
        "counts = {}\n"
        "for name, entry in catalog.MODELS.items():\n"
        "    kind = entry['inputs'][0]\n"
        "    spec = {'input_shape': catalog.INPUT_SHAPES[kind], 'vocabulary': 30000,\n"
        "            'classes': 2 if kind == 'words150' else 10}\n"
        "    counts[name] = keras_models.BUILDERS[name](keras, spec).count_params()\n"
        "print(json.dumps(counts))\n"
    )
    python = str(workdir / ".venvs/keras-jax/bin/python")
    done = subprocess.run(
        [python, "-c", script], cwd=workdir / "src", capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    assert counts == {name: entry["parameters"] for name, entry in catalog.MODELS.items()}


def test_timed_runs_never_overlapped(workdir):
    spans = sorted(
        (load_record(workdir, m, b)["started"], load_record(workdir, m, b)["finished"])
        for m in MODELS + ["lenet"]
        for b in BACKENDS
    )
    for (_, finished), (started, _) in zip(spans, spans[1:]):
        assert finished <= started


def test_summary_and_tables(workdir):
    summary = pd.read_csv(workdir / "results/summary.csv")
    assert len(summary) == 9 and (summary["status"] == "ok").all()
    assert (summary["headline_median"] > 0).all()
    metrics = pd.read_csv(workdir / "results/metrics.csv")
    assert len(metrics) == 9 and set(metrics["backend"]) == set(BACKENDS)
    for model in MODELS:
        table = (workdir / "results/tables/digits_{}.md".format(model)).read_text()
        assert all("| " + backend in table for backend in BACKENDS)
        for plot in ("epoch_time", "accuracy"):
            png = workdir / "results/plots/digits_{}_{}.png".format(model, plot)
            assert png.read_bytes()[:4] == b"\x89PNG"


def test_report(workdir):
    snakemake(workdir, "--report", "report.html")
    html = (workdir / "report.html").read_text()
    assert len(html) > 100_000  # plots are embedded
    for name in ("digits_mlp_epoch_time.png", "digits_cnn_accuracy.png", "summary.csv"):
        assert name in html


def test_untouched_workflow_has_nothing_to_do(workdir):
    done = snakemake(workdir, "-n")
    assert "Nothing to be done" in done.stdout + done.stderr
    assert pending_runs(workdir) == []


def test_hyper_parameter_edit_reruns_exactly_that_model(workdir):
    config = snakemake_config(workdir)
    config["workloads"][1]["epochs"] += 1  # cnn
    write_config(workdir / "config/edited.yaml", config)
    assert pending_runs(workdir, "--configfile", "config/edited.yaml") == [
        ("cnn", backend) for backend in BACKENDS
    ]


def test_env_file_edit_reruns_exactly_that_backend(workdir):
    env_file = workdir / "envs/keras-jax.yaml"
    env_file.write_text(env_file.read_text() + "# edited\n")
    models = ["cnn", "lenet", "mlp"]
    assert pending_runs(workdir) == [(model, "keras-jax") for model in models]
    before = {(m, b): load_record(workdir, m, b)["started"] for m in models for b in BACKENDS}
    snakemake(workdir, "-j2")
    after = {(m, b): load_record(workdir, m, b)["started"] for m in models for b in BACKENDS}
    changed = sorted(key for key in before if before[key] != after[key])
    assert changed == [(model, "keras-jax") for model in models]
    assert pending_runs(workdir) == []


def snakemake_config(workdir):
    import yaml

    with open(workdir / "config/smoke.yaml") as handle:
        return yaml.safe_load(handle)


def test_bad_config_is_refused_before_any_job(workdir):
    config = snakemake_config(workdir)
    config["workloads"][0]["model"] = "transformer"
    write_config(workdir / "config/bad.yaml", config)
    done = snakemake(workdir, "-n", "--configfile", "config/bad.yaml", check=False)
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "'transformer' is not one of" in output and "model" in output
    assert "rule bench" not in output


def test_conda_mode_plans_no_venvs(workdir):
    """No conda here: check the conda path statically. Under conda the bench
    rule runs the activated env's python and builds no venv."""
    done = snakemake(workdir, "-n", "--forceall", "--printshellcmds", "--config", "env_mode=conda")
    output = done.stdout
    assert "rule venv:" not in output
    bench_commands = [
        line.split(":", 1)[1].strip()
        for line in output.splitlines()
        if line.startswith("Shell command:") and "-m dlbench.supervise" in line
    ]
    assert len(bench_commands) == 9
    assert all(command.startswith("PYTHONPATH=src python -m ") for command in bench_commands)
