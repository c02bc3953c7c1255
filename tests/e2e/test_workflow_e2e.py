"""The workflow for real: Snakemake on the offline smoke config, every
backend in its own venv, then the re-run rules.

The tests of this module read the session's built workflow (conftest's
``smoke_workflow``) and run in order; the later ones change it.
"""

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from conftest import REPO, RUN_TIMEOUT_S, needs_browser, run_json, run_snakemake, write_config
from dlbench import (
    abstraction,
    catalog,
    equivalence,
    flops,
    launch,
    matrix,
    record_schema,
    workloads,
)
from report_browser import check_report

pytestmark = pytest.mark.e2e

KERAS3 = ["keras-jax", "keras-tensorflow", "keras-torch"]
LEGACY = ["keras-mxnet", "keras2-cntk", "keras2-theano"]
BACKENDS = KERAS3 + ["keras-openvino"]
NATIVE = sorted(b for b in catalog.BACKENDS if b.startswith("native-"))
# The smoke's final accuracies are not a test of sameness: 4 epochs of 11
# RMSprop steps on 1,438 digits leave the validation accuracy swinging from
# epoch to epoch (measured on keras-torch from the shared weights: 0.86,
# 0.92, 0.71, 0.97), and every framework draws its own dropout masks, so a
# backend that computes the same can end 0.05 off the median. Whether the
# backends compute the same is the equivalence check's question
# (test_every_backend_takes_the_same_steps_from_the_same_weights); here
# every backend must learn, and its parity must be judged.
LEARNED = 0.5  # chance is 0.1
# Installed as sitecustomize: each torchrun rank writes the names of its
# threads when the interpreter begins to shut down (atexit runs before the
# shutdown's last garbage collection).
THREADS_AT_EXIT = """
import atexit, os

def _write_threads():
    rank = os.environ.get("RANK")
    if rank is None:
        return  # torchrun's agent
    tasks = "/proc/self/task"
    names = [open(os.path.join(tasks, t, "comm")).read().strip() for t in os.listdir(tasks)]
    path = os.path.join(os.environ["THREADS_AT_EXIT"], "rank" + rank)
    with open(path, "w") as handle:
        handle.write("\\n".join(names))

atexit.register(_write_threads)
"""


def smoke_runs():
    """(dataset, model, backend, task) of every cell the smoke config runs."""
    config = snakemake_config(REPO)
    cells = {
        (
            run.dataset,
            run.model,
            run.backend,
            matrix.workload(config, run.dataset, run.model)["task"],
        )
        for run in matrix.runs(config)
    }
    return sorted(cells)


def snakemake(workdir, *args, check=True):
    return run_snakemake(workdir, "--configfile", "config/smoke.yaml", *args, check=check)


def pending_runs(workdir, *args):
    """(model, backend) of every run record Snakemake plans to (re)make."""
    summary = snakemake(workdir, "--summary", *args).stdout
    lines = [line.split("\t") for line in summary.splitlines() if line.startswith("results/runs/")]
    return sorted(
        (Path(cells[0]).parts[4], Path(cells[0]).parts[5])
        for cells in lines
        if cells[0].endswith("run.json") and cells[-1] != "no update"
    )


@pytest.fixture(scope="module")
def workdir(smoke_workflow):
    return smoke_workflow


@pytest.fixture(scope="module")
def setup_workflow(built_workflow):
    """The session's workflow with the smoke config's venvs and data; its
    smoke run may still be under way."""
    built_workflow.build("results/data/digits.npz")
    return built_workflow


def load_record(workdir, model, backend, dataset="digits", repeat=1):
    path = workdir / run_json(dataset, model, backend, repeat=repeat)
    return json.loads(path.read_text())


def counted_flops(workdir, dataset, model):
    return json.loads((workdir / "results/flops/{}/{}.json".format(dataset, model)).read_text())


def prepared_meta(workdir, dataset):
    import numpy as np

    with np.load(workdir / "results/data/{}.npz".format(dataset)) as arrays:
        return json.loads(str(arrays["meta"]))


def test_smoke_run_writes_a_complete_record_per_run(workdir):
    for dataset, model, backend, task in smoke_runs():
        record = load_record(workdir, model, backend, dataset)
        assert record["status"] == "ok", (dataset, model, backend, record.get("error"))
        assert record_schema.problems(record) == [], (dataset, model, backend)
        assert record["environment_check"] == {"mode": "venv", "mismatches": []}
        expected = catalog.parameter_count(model, prepared_meta(workdir, dataset))
        if workloads.is_custom(model):  # the model Keras builds on torch for its FLOPs
            expected = counted_flops(workdir, dataset, model)["parameters"]
        assert record["parameters"] == expected, (model, backend)
        framework = catalog.BACKENDS[backend]["framework"]
        if backend.startswith("native-"):
            assert record["environment"]["framework"] == framework
            assert "keras" not in record["environment"]
        else:
            assert record["environment"]["keras_backend"] == framework
        assert record["environment"]["python_executable"].startswith(
            str(workdir / ".venvs" / backend)
        )
        assert record["settings"]["threads"] == record["environment"]["threads"]
        if task == "train":
            assert len(record["epochs"]) == record["hyper"]["epochs"]
            assert record["first_epoch_seconds"] > 0 and record["steady_epoch_seconds"] > 0


# Where a framework's loader does not convert a layer yet: the run starts from its own draw.
OWN_START = {
    ("imdb_gru", "native-cntk"): "no CNTK conversion of Keras' Embedding",
    ("resnet50", "native-tensorflow"): "cannot tell a BatchNormalization's four vectors",
    ("resnet50", "native-torch"): "could not load them",
    ("resnet50", "native-jax"): "could not load them",
}


def test_every_training_run_starts_from_the_shared_weights(workdir):
    """One file per workload and seed, drawn once (and for LeNet's
    inference trained once from the draw); every run of the cell loaded it
    (its record keeps the file's checksum), but where its framework cannot
    convert a layer yet: then it says why, and its table row says OWN."""
    summary = pd.read_csv(workdir / "results/summary.csv")
    for dataset, model, backend, _ in smoke_runs():
        record = load_record(workdir, model, backend, dataset)
        started = record["initial_weights"]
        path = workdir / started["file"]
        drawn = model != "lenet"  # the smoke trains LeNet's weights (trained_weights)
        pattern = matrix.WEIGHTS if drawn else matrix.TRAINED_WEIGHTS
        assert started["file"] == pattern.format(dataset=dataset, model=model, seed=42)
        assert ("trained" in started) is not drawn
        assert started["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        if (model, backend) in OWN_START:
            assert not started["loaded"] and OWN_START[(model, backend)] in started["reason"]
            row = summary[(summary["model"] == model) & (summary["backend"] == backend)]
            assert row["initial_weights"].iloc[0].startswith("OWN: ")
        else:
            assert started["loaded"], (model, backend, started.get("reason"))
    table = (workdir / "results/tables/digits_cnn.md").read_text()
    assert "initial_weights" in table and "| shared" in table
    repeats = [load_record(workdir, "mlp", "keras-jax", repeat=r) for r in (1, 2, 3)]
    assert len({r["initial_weights"]["sha256"] for r in repeats}) == 3  # one draw per seed


def test_models_learn_on_the_smoke_data(workdir):
    """Well above chance after a few epochs: the data and the training are
    real (chance is 0.1 on digits and CIFAR, 0.5 on IMDB)."""
    floors = {"mlp": 0.5, "cnn": 0.5, "cifar_cnn": 0.3, "imdb_gru": 0.6, "imdb_transformer": 0.6}
    for dataset, model, backend, _ in smoke_runs():
        if model in floors:
            record = load_record(workdir, model, backend, dataset)
            assert record["test_accuracy"] > floors[model], (model, backend)


def test_babi_run_holds_out_five_percent_and_records_the_lstm_kernel(workdir):
    for backend in KERAS3:
        record = load_record(workdir, "babi_rnn", backend, "babi_tiny")
        assert (record["train_samples"], record["validation_samples"]) == (475, 25)
        assert record["test_samples"] == 200
        assert record["settings"]["recurrent_kernels"]["lstm"]
    gru = load_record(workdir, "imdb_gru", "keras-jax", "imdb_tiny")["settings"]
    assert set(gru["recurrent_kernels"]) == {"gru"}


def test_seed_systems_run_the_same_models(workdir):
    """Keras 2 on Theano, CNTK and MXNet: same parameter counts as Keras 3,
    their settings recorded, accuracy near Keras 3's on the same data."""
    for backend in LEGACY:
        for model in ("mlp", "cnn"):
            record = load_record(workdir, model, backend)
            assert record["environment"]["keras"].startswith("2.")
            keras3 = load_record(workdir, model, "keras-jax")
            assert record["parameters"] == keras3["parameters"]
            assert record["test_accuracy"] > 0.5
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["model", "backend"])
    for backend in LEGACY:
        assert summary.loc[("mlp", backend), "test_accuracy"] > LEARNED, backend
        assert summary.loc[("mlp", backend), "accuracy_parity"] in ("ok", "outside")
    theano = load_record(workdir, "mlp", "keras2-theano")["settings"]
    assert "floatX=float32" in theano["theano_flags"]
    assert load_record(workdir, "mlp", "keras2-cntk")["environment"]["python"].startswith("3.6")


def test_inference_run_records(workdir):
    for backend in BACKENDS + LEGACY + NATIVE:
        record = load_record(workdir, "lenet", backend)
        assert record["task"] == "infer" and record["parameters"] == 431080
        assert len(record["latencies_ms"]) == 100
        assert 0 < record["latency_ms"]["p50"] <= record["latency_ms"]["p99"]
        assert record["samples_per_second"] > 0
    for plot in ("latency", "throughput"):
        png = workdir / "results/plots/imagenet_synthetic_resnet50_{}.png".format(plot)
        assert png.read_bytes()[:4] == b"\x89PNG"
    openvino = load_record(workdir, "resnet50", "keras-openvino", "imagenet_synthetic")
    assert openvino["settings"]["inference_precision"] == "f32"  # never OpenVINO's bf16 default
    table = (workdir / "results/tables/digits_lenet.md").read_text()
    assert "p50 latency ms" in table and all("| " + b in table for b in BACKENDS + LEGACY + NATIVE)
    table = (workdir / "results/tables/imagenet_synthetic_resnet50.csv").read_text()
    assert "s_per_1000" in table


def test_every_backend_predicts_the_same_from_the_same_weights(workdir):
    """LeNet, trained once on the digits by the workflow, infers with the
    same weights on all 13 backends: the same classes and the same
    probabilities to float32 rounding; ResNet-50 from the shared draw on
    the Keras 3 backends (its natives cannot load BatchNormalization yet,
    and say so)."""
    table = pd.read_csv(workdir / "results/tables/predictions.csv")
    lenet = table[table["model"] == "lenet"].set_index("backend")
    assert set(lenet.index) == set(BACKENDS + LEGACY + NATIVE)
    assert (lenet["verdict"] == equivalence.VERDICT_SAME_PREDICTIONS).all(), lenet["verdict"]
    assert (lenet["classes_differing"] == 0).all() and lenet["classes_sha256"].nunique() == 1
    assert lenet["weights"].str.startswith("trained (keras-torch").all()
    trained = load_record(workdir, "lenet", "native-mxnet")["initial_weights"]["trained"]
    assert trained["test_accuracy"] > 0.9  # chance is 0.1: the weights were trained
    record = load_record(workdir, "lenet", "keras2-cntk")
    assert record["predictions"]["samples"] == 64 and record["predictions"]["columns"] == 10
    resnet = table[table["model"] == "resnet50"].set_index("backend")
    for backend in resnet.index:
        expected = OWN_START.get(("resnet50", backend))
        if expected:
            assert resnet.loc[backend, "verdict"].startswith("not compared: own weights")
            assert expected in resnet.loc[backend, "verdict"], resnet.loc[backend, "verdict"]
        else:
            assert resnet.loc[backend, "verdict"] == equivalence.VERDICT_SAME_PREDICTIONS, backend
            assert pd.isna(resnet.loc[backend, "classes_differing"])  # features, not classes
    workload = pd.read_csv(workdir / "results/tables/digits_lenet.csv")
    assert set(workload["same_predictions"]) == {equivalence.VERDICT_SAME_PREDICTIONS}
    assert (
        "Predictions from the same weights"
        in (workdir / "results/tables/predictions.md").read_text()
    )


def test_timed_runs_never_overlapped(workdir):
    """Timed runs took turns, and no venv build ran beside one; the builds
    (one unit of the CPU each) ran two at a time."""
    paths = sorted((workdir / "results/runs").glob("**/run.json"))
    assert len(paths) == len(matrix.runs(snakemake_config(workdir)))
    records = [json.loads(path.read_text()) for path in paths]
    spans = sorted((record["started"], record["finished"]) for record in records)
    for (_, finished), (started, _) in zip(spans, spans[1:]):
        assert finished <= started
    builds = [json.loads(path.read_text()) for path in (workdir / ".venvs").glob("*/ready.json")]
    builds = sorted((build["started"], build["finished"]) for build in builds)
    assert len(builds) == len(snakemake_config(workdir)["backends"])
    for build_started, build_finished in builds:
        for started, finished in spans:
            assert build_finished <= started or finished <= build_started
    assert any(later[0] < earlier[1] for earlier, later in zip(builds, builds[1:]))


def test_summary_and_tables(workdir):
    summary = pd.read_csv(workdir / "results/summary.csv")
    runs = smoke_runs()
    ran = summary[summary["status"] != "not_applicable"]
    assert len(ran) == len(runs) and (ran["status"] == "ok").all()
    assert (ran["headline_median"] > 0).all()
    # the inference-only backend's training cells: shown, not run, not failed
    not_applicable = summary[summary["status"] == "not_applicable"]
    openvino = not_applicable[not_applicable["backend"] == "keras-openvino"]
    assert set(openvino["task"]) == {"train"} and len(openvino) == 5
    expected = matrix.not_applicable_cells(snakemake_config(workdir))
    assert len(not_applicable) == len(expected)
    assert not_applicable["error"].str.startswith("n/a (").all()
    trained = ran[ran["task"] == "train"]
    assert set(trained["accuracy_parity"]) <= {"ok", "outside"}
    assert trained["accuracy_tolerance"].eq(0.05).all()
    metrics = pd.read_csv(workdir / "results/metrics.csv")
    backends = set(snakemake_config(workdir)["backends"])
    assert len(metrics) == len(matrix.runs(snakemake_config(workdir)))
    assert set(metrics["backend"]) == backends
    for dataset, model, _, task in set((d, m, None, t) for d, m, _, t in runs):
        table = (workdir / "results/tables/{}_{}.md".format(dataset, model)).read_text()
        assert all("| " + b in table for d, m, b, _ in runs if (d, m) == (dataset, model))
        if task == "train":
            assert "accuracy_parity" in table
            if "keras-openvino" in table:
                assert "n/a (inference only)" in table
        for plot in ("epoch_time", "convergence") if task == "train" else ("latency",):
            png = workdir / "results/plots/{}_{}_{}.png".format(dataset, model, plot)
            assert png.read_bytes()[:4] == b"\x89PNG"


def test_native_backends_train_the_same_models_as_keras(workdir):
    """Every native backend of the smoke config, each in its own venv,
    through the same harness: Keras' parameter counts, the digits models
    learned and their accuracy parity judged, the settings that ran
    recorded."""
    config = snakemake_config(workdir)
    natives = [backend for backend in config["backends"] if backend.startswith("native-")]
    assert sorted(natives) == NATIVE
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["model", "backend"])
    for backend in natives:
        for model in ("mlp", "cnn", "lenet"):
            record = load_record(workdir, model, backend)
            assert record["status"] == "ok", (backend, model, record.get("error"))
            assert record["parameters"] == catalog.MODELS[model]["parameters"], (backend, model)
            assert record["settings"], backend
        for model in ("mlp", "cnn"):
            assert summary.loc[(model, backend), "test_accuracy"] > LEARNED, (model, backend)
            assert summary.loc[(model, backend), "accuracy_parity"] in ("ok", "outside")
        assert record["environment"]["python_executable"].startswith(
            str(workdir / ".venvs" / backend)
        )


# What computes other than Keras 3 on the smoke's digits workloads (their
# records' settings.own_rules): RMSprop with epsilon after the square root
# (Keras 2 on Theano and CNTK, torch.optim) or CNTK's own epsilon (the mlp); on Theano and
# PyTensor, max pooling's gradient to every tied maximum and (Keras 2 on
# Theano) ReLU's gradient of 0.5 at 0 (the cnn).
OWN_RULES = {
    "mlp": {"keras2-cntk", "keras2-theano", "native-torch", "native-cntk"},
    "cnn": {"keras2-theano", "native-pytensor"},
}


def test_every_backend_takes_the_same_steps_from_the_same_weights(workdir):
    """The equivalence check on the smoke's digits workloads: every backend
    that computes as Keras 3 does follows the median's curve for all its
    steps; those whose framework has rules of its own depart from it (the
    check sees their rules), and say so."""
    config = snakemake_config(workdir)
    table = pd.read_csv(workdir / "results/tables/equivalence.csv")
    checked = {(run.dataset, run.model, run.backend) for run in matrix.check_runs(config)}
    assert set(zip(table["dataset"], table["model"], table["backend"])) == checked
    for run in matrix.check_runs(config):
        record = json.loads((workdir / matrix.check_dir(run) / "check.json").read_text())
        assert record_schema.problems(record) == [], run
        assert record["status"] == "ok", (run, record.get("error"))
        assert record["initial_weights"]["loaded"], run
        assert len(record["check"]["losses"]) == config["equivalence_check"]["steps"] + 1
    rows = table.set_index(["model", "backend"])
    for model, own in OWN_RULES.items():
        found = rows.loc[model]
        assert set(found.index[found["own_rules"].notna()]) == own & set(found.index), model
        keras_rules = found.drop(index=list(own & set(found.index)))
        assert (keras_rules["verdict"] == equivalence.VERDICT_SAME).all(), keras_rules
        for backend in own & set(found.index):
            assert "(expected)" in found.loc[backend, "verdict"], (model, backend)
    # step 0: the same forward pass from the same weights, to float32 rounding
    initial = table.groupby("model")["initial_loss"]
    assert ((initial.max() - initial.min()) / initial.min() < 1e-5).all(), initial.describe()
    for model in ("mlp", "cnn"):
        workload = pd.read_csv(workdir / "results/tables/digits_{}.csv".format(model))
        assert set(workload["same_steps"].dropna()) <= set(table["verdict"])
    assert (
        "Do the backends take the same steps?"
        in (workdir / "results/tables/equivalence.md").read_text()
    )


def test_abstraction_cost_and_lines_of_code_tables(workdir):
    """Keras / native ratios with intervals for every pair and digits
    workload; lines of code for every implementation the config runs."""
    config = snakemake_config(workdir)
    cost = pd.read_csv(workdir / "results/tables/abstraction_cost.csv")
    pairs = abstraction.pairs(set(config["backends"]))
    assert len(pairs) >= 4
    for keras, native in pairs:
        rows = cost[(cost["keras_backend"] == keras) & (cost["native_backend"] == native)]
        assert {"mlp", "cnn", "lenet"} <= set(rows["model"]), (keras, native)
        assert (rows["ratio_ci_low"] <= rows["ratio"]).all()
        assert (rows["ratio"] <= rows["ratio_ci_high"]).all()
        assert (rows["ratio"] > 0).all()
    lenet = cost[cost["model"] == "lenet"]
    assert set(lenet["measure"]) == {"p50 latency ms"} and (lenet["native_samples"] == 100).all()
    table = (workdir / "results/tables/abstraction_cost.md").read_text()
    assert all("{} / {}".format(keras, native) in table for keras, native in pairs)

    counted = pd.read_csv(workdir / "results/tables/lines_of_code.csv")
    ran = {(dataset, model, backend) for dataset, model, backend, _ in smoke_runs()}
    assert set(zip(counted["dataset"], counted["model"], counted["backend"])) == ran
    assert (counted["lines"] == counted["model_lines"] + counted["step_lines"]).all()
    assert (counted["model_lines"] > 0).all() and (counted["step_lines"] > 0).all()
    assert set(counted["implementation"]) == {"Keras", "native"}
    for name in ("abstraction_cost", "lines_of_code"):
        png = workdir / "results/plots/{}.png".format(name)
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_statistics_over_repeats(workdir):
    """digits/mlp runs several repeats in the smoke config: every cell gets an
    interval, a noise figure and a tested difference from the fastest;
    single-repeat workloads are listed as not tested."""
    summary = pd.read_csv(workdir / "results/summary.csv")
    mlp = summary[(summary["model"] == "mlp") & (summary["status"] == "ok")]
    repeats = matrix.workload(snakemake_config(workdir), "digits", "mlp")["repeats"]
    assert repeats >= 3
    assert (mlp["runs_ok"] == repeats).all() and mlp["ci_level"].eq(1 - 2 * 0.5**repeats).all()
    assert (mlp["headline_ci_low"] <= mlp["headline_median"]).all()
    assert (mlp["headline_median"] <= mlp["headline_ci_high"]).all()
    assert mlp["headline_cv"].notna().all()
    assert (mlp["noisy"] == (mlp["headline_cv"] > 0.1)).all()
    assert (mlp["vs_fastest"] == "fastest").sum() == 1
    assert set(mlp["vs_fastest"]) - {"fastest"} <= {"slower", "not different"}
    cnn = summary[(summary["model"] == "cnn") & (summary["status"] == "ok")]
    assert cnn["headline_cv"].isna().all() and cnn["noisy"].isna().all()
    assert set(cnn["vs_fastest"]) == {"fastest", "not tested"}

    pairs = pd.read_csv(workdir / "results/tables/significance.csv")
    tested = pairs[pairs["p_holm"].notna()]
    backends = len(mlp)
    assert len(tested) == backends * (backends - 1) // 2
    assert set(tested["model"]) == {"mlp"} and (tested["p_holm"] >= tested["p_value"]).all()
    assert (tested["ratio_ci_low"] <= tested["ratio"]).all()
    assert (pairs.loc[pairs["p_holm"].isna(), "model"] != "mlp").all()
    assert (tested["significant"] == (tested["p_holm"] < 0.05)).all()
    table = (workdir / "results/tables/digits_mlp.md").read_text()
    assert "CPU: vs fastest" in table
    assert table.count("significant, p=") == backends - 1  # "not significant" included


def test_overview_tables_and_plots(workdir):
    environment = pd.read_csv(workdir / "results/tables/environment.csv")
    assert set(environment["backend"]) == set(snakemake_config(workdir)["backends"])
    assert environment["version"].notna().all() and environment["Python"].notna().all()
    assert (environment["CPU matmul GFLOP/s"] > 0).all()
    assert environment["threads"].notna().all()
    record = load_record(workdir, "mlp", "keras-jax")
    assert record["environment"]["matmul_probe"]["size"] == 1024

    comparison = pd.read_csv(workdir / "results/tables/published_comparison.csv")
    published = pd.read_csv(REPO / "workflow/resources/published_results.csv")
    assert set(comparison["source"]) == set(published["source"])
    measured = comparison[comparison["our_value"].notna()]
    assert {"mnist_mlp", "imdb_gru", "resnet50_features"} <= set(measured["workload"])
    assert measured["our_hardware"].str.startswith("CPU (").all()
    assert (measured["our_relative_common"] >= 1).all()
    assert (
        measured.groupby(["source", "workload", "published_hardware"])["our_relative_common"].min()
        == 1
    ).all()
    used = pd.read_csv(workdir / "results/tables/utilisation.csv")
    summary = pd.read_csv(workdir / "results/summary.csv")
    assert len(used) == (summary["status"] == "ok").sum()
    for (dataset, model), cells in used.groupby(["dataset", "model"]):
        if workloads.is_custom(model):
            expected = counted_flops(workdir, dataset, model)
        else:
            expected = flops.per_sample_of(workdir / "results/data/{}.npz".format(dataset), model)
        assert (cells["forward_gflops_per_sample"] == expected["forward"] / 1e9).all()
    assert (used["achieved_gflops"] > 0).all()
    # float32 everywhere: no cell outruns the machine's float32 matmul by much
    assert used["mfu"].between(0, 1.2).all(), used.loc[used["mfu"] > 1.2, ["backend", "mfu"]]
    for name in ("relative_speed", "published_comparison", "utilisation"):
        png = workdir / "results/plots/{}.png".format(name)
        assert png.read_bytes()[:4] == b"\x89PNG"


@needs_browser
def test_report(workdir):
    """snakemake --report on the smoke results, then the report in headless
    Chromium: every category and result opened as a reader would, every
    image loaded, every table with rows; screenshots kept in the test's
    results folder (results/report_screenshots)."""
    snakemake(workdir, "--report", "report.html")
    html = (workdir / "report.html").read_text()
    assert len(html) > 100_000  # plots are embedded
    for name in (
        "digits_mlp_epoch_time.png",
        "babi_tiny_babi_rnn_convergence.png",
        "imagenet_synthetic_resnet50_throughput.png",
        "summary.csv",
        "abstraction_cost.png",
        "lines_of_code.png",
        "abstraction_cost.csv",
        "relative_speed.png",
        "significance.html",
        "environment.html",
        "utilisation.png",
        "published_comparison.html",
        "digits_mlp.html",
    ):
        assert name in html

    checked = check_report(workdir / "report.html", workdir / "results/report_screenshots")
    assert checked["problems"] == []
    assert checked["opened"] == checked["results"]
    pngs = len(list((workdir / "results/plots").glob("*.png")))
    assert checked["images"] >= pngs
    assert all(rows > 0 for rows in checked["table_rows"].values())
    assert "results/tables/digits_mlp.html" in checked["table_rows"]
    assert len(checked["screenshots"]) >= 4


def test_untouched_workflow_has_nothing_to_do(workdir):
    done = snakemake(workdir, "-n")
    assert "Nothing to be done" in done.stdout + done.stderr
    assert pending_runs(workdir) == []


def test_hyper_parameter_edit_reruns_exactly_that_model(workdir):
    config = snakemake_config(workdir)
    config["workloads"][1]["epochs"] += 1  # cnn
    write_config(workdir / "config/edited.yaml", config)
    assert pending_runs(workdir, "--configfile", "config/edited.yaml") == sorted(
        ("cnn", backend) for _, model, backend, _ in smoke_runs() if model == "cnn"
    )


def test_env_file_edit_reruns_exactly_that_backend(workdir):
    """A comment is not what an environment installs: nothing is rebuilt or
    re-run. A pin added (of a package the venv holds already) rebuilds that
    venv and re-runs exactly that backend's cells."""
    env_file = workdir / "envs/keras-openvino.yaml"
    original = env_file.read_text()
    env_file.write_text("# edited: a comment only\n" + original)
    assert pending_runs(workdir) == []
    held = json.loads((workdir / ".venvs/keras-openvino/ready.json").read_text())["pip_freeze"]
    (pin,) = [line for line in held if line.startswith("namex==")]
    env_file.write_text(original.replace("  - pip:\n", "  - pip:\n      - {}\n".format(pin)))
    openvino = [(m, "keras-openvino") for m in ("lenet", "resnet50")]
    assert pending_runs(workdir) == openvino
    runs = [(d, m, b) for d, m, b, _ in smoke_runs()]
    before = {run: load_record(workdir, run[1], run[2], run[0])["started"] for run in runs}
    snakemake(workdir, "-j2")
    after = {run: load_record(workdir, run[1], run[2], run[0])["started"] for run in runs}
    changed = sorted((m, b) for (d, m, b) in before if before[(d, m, b)] != after[(d, m, b)])
    assert changed == openvino
    assert (
        pin in json.loads((workdir / ".venvs/keras-openvino/ready.json").read_text())["pip_freeze"]
    )
    assert pending_runs(workdir) == []


EXAMPLE = "examples/imdb_transformer.py"
KERAS3_TRAINING = ["keras-jax", "keras-tensorflow", "keras-torch"]


def test_a_model_of_your_own_runs_like_a_built_in_one(workdir):
    """The example Transformer named in the smoke config: on every Keras 3
    backend that trains, n/a on native torch, its parameters from the built
    model, its FLOPs counted, in the tables and plots of every workload."""
    digest = hashlib.sha256((workdir / EXAMPLE).read_bytes()).hexdigest()
    counted = counted_flops(workdir, "imdb_tiny", "imdb_transformer")
    assert counted["counter"].startswith("torch.utils.flop_counter.FlopCounterMode on Keras")
    # embeddings 30,000 x 32 and 150 x 32; attention 4 x (32 x 32 + 32); two layer
    # norms; feed-forward 32 -> 64 -> 32; the classifier 32 -> 2
    assert counted["parameters"] == 960000 + 4800 + 4224 + 2 * 64 + 2112 + 2080 + 66
    for backend in KERAS3_TRAINING:
        record = load_record(workdir, "imdb_transformer", backend, "imdb_tiny")
        assert record["status"] == "ok", (backend, record.get("error"))
        assert record["custom_model"] == {
            "file": EXAMPLE,
            "builder": "build",
            "inputs": ["words150"],
            "sha256": digest,
        }
        assert record["parameters"] == counted["parameters"]
    summary = pd.read_csv(workdir / "results/summary.csv")
    own = summary[summary["model"] == "imdb_transformer"].set_index("backend")
    assert sorted(own.index) == KERAS3_TRAINING + ["native-torch"]
    assert own.loc["native-torch", "status"] == "not_applicable"
    assert "Keras model of your own" in own.loc["native-torch", "error"]
    used = pd.read_csv(workdir / "results/tables/utilisation.csv")
    used = used[used["model"] == "imdb_transformer"]
    assert sorted(used["backend"]) == KERAS3_TRAINING
    assert (used["training_gflops_per_sample"] == counted["training"] / 1e9).all()
    assert (used["mfu"] > 0).all()
    counted_lines = pd.read_csv(workdir / "results/tables/lines_of_code.csv")
    assert (counted_lines["model"] == "imdb_transformer").sum() == len(KERAS3_TRAINING)
    for plot in ("epoch_time", "convergence"):
        png = workdir / "results/plots/imdb_tiny_imdb_transformer_{}.png".format(plot)
        assert png.read_bytes()[:4] == b"\x89PNG"


def test_editing_your_model_reruns_exactly_its_cells(workdir):
    """An edit of the model's file re-runs its cells and re-counts its FLOPs,
    nothing else; the records name the new file's digest."""
    example = workdir / EXAMPLE
    example.write_text(example.read_text().replace("DROPOUT = 0.1", "DROPOUT = 0.2"))
    own = [("imdb_transformer", backend) for backend in KERAS3_TRAINING]
    assert pending_runs(workdir) == own
    flops_file = workdir / "results/flops/imdb_tiny/imdb_transformer.json"
    counted_before = flops_file.stat().st_mtime_ns
    runs = [(d, m, b) for d, m, b, _ in smoke_runs()]
    before = {run: load_record(workdir, run[1], run[2], run[0])["started"] for run in runs}
    snakemake(workdir, "-j2")
    after = {run: load_record(workdir, run[1], run[2], run[0])["started"] for run in runs}
    changed = sorted((m, b) for (d, m, b) in before if before[(d, m, b)] != after[(d, m, b)])
    assert changed == own
    assert flops_file.stat().st_mtime_ns != counted_before
    digest = hashlib.sha256(example.read_bytes()).hexdigest()
    for _, backend in own:
        record = load_record(workdir, "imdb_transformer", backend, "imdb_tiny")
        assert record["custom_model"]["sha256"] == digest and record["status"] == "ok"
    assert pending_runs(workdir) == []


def snakemake_config(workdir):
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
    config = snakemake_config(workdir)  # the timed runs and the equivalence check's
    assert len(bench_commands) == len(matrix.runs(config)) + len(matrix.check_runs(config))
    assert all(command.startswith("PYTHONPATH=src python -m ") for command in bench_commands)


def test_added_device_counts_rerun_no_cpu_run(workdir):
    """Devices 1 and 2 (emulated) beside the CPU: only the new cells are
    planned, none of the CPU runs the smoke run made (tests/test_emulated_devices.py
    runs such cells)."""
    config = snakemake_config(workdir)
    parallel = [
        backend
        for backend in config["backends"]
        if "launch" in catalog.BACKENDS[backend]["data_parallel"]
    ]
    config["workloads"] = [w for w in config["workloads"] if w["model"] == "mlp"]
    config.update(devices=[0, 1, 2], accelerator="emulated-cpu")
    write_config(workdir / "config" / "devices.yaml", config)
    planned = snakemake(workdir, "-n", "--configfile", "config/devices.yaml")
    records = {
        line.split("output:", 1)[1].split(",")[0].strip()
        for line in (planned.stdout + planned.stderr).splitlines()
        if "output: results/runs/" in line
    }
    assert records == {
        run_json("digits", "mlp", backend, devices=n, repeat=repeat)
        for backend in parallel
        for n in (1, 2)
        for repeat in range(1, config["workloads"][0]["repeats"] + 1)
    }


def test_gpu_request_on_a_cpu_build_fails_honestly(setup_workflow, tmp_path):
    """A GPU run whose framework sees no GPU fails with the reason instead
    of timing the CPU (here: a made-up GPU id and JAX's CPU build)."""
    workdir = setup_workflow.path
    config = snakemake_config(workdir)
    config["devices"] = [1]
    spec = matrix.spec(config, matrix.Run("digits", "mlp", "keras-jax", devices=1, repeat=1))
    record = tmp_path / "run.json"
    done = subprocess.run(
        [str(setup_workflow.venv("keras-jax") / "bin/python"), "-m", "dlbench.supervise"]
        + ["--spec", json.dumps(spec), "--data", "results/data/digits.npz"]
        + ["--record", str(record), "--epochs", str(tmp_path / "epochs.csv")]
        + ["--gpu-lock-dir", str(tmp_path / "locks")],
        cwd=workdir,
        env={**os.environ, "PYTHONPATH": "src", "CUDA_VISIBLE_DEVICES": "7"},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(record.read_text())
    assert result["status"] == "failed"
    assert "devices=1 asks for 1 GPUs; jax sees" in result["error"]
    assert result["parallel"]["gpu_ids"] == ["7"]


def test_torchrun_ranks_free_their_process_group_before_shutdown(setup_workflow, tmp_path):
    """Every rank torchrun starts has destroyed its gloo process group, and
    the group's threads are gone, before the interpreter shuts down. Keras'
    torch train step keeps its DistributedDataParallel wrapper in a reference
    cycle; a group freed only by the shutdown's garbage collection aborted a
    rank in 5 to 10 % of runs ("terminate called without an active
    exception", SIGABRT or SIGSEGV) and failed the whole run."""
    workdir = setup_workflow.path
    config = dict(snakemake_config(workdir), accelerator="emulated-cpu")
    spec = matrix.spec(config, matrix.Run("digits", "mlp", "keras-torch", devices=2, repeat=1))
    spec["hyper"]["epochs"] = 2
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(THREADS_AT_EXIT)
    record = tmp_path / "run.json"
    arguments = ["--spec", json.dumps(spec), "--data", "results/data/digits.npz"]
    arguments += ["--record", str(record), "--epochs", str(tmp_path / "epochs.csv")]
    python = str(setup_workflow.venv("keras-torch") / "bin/python")
    environment = dict(
        os.environ,
        PYTHONPATH="{}:{}".format(hooks, workdir / "src"),
        THREADS_AT_EXIT=str(tmp_path),
        **launch.environment(spec["parallel"]),
    )
    done = subprocess.run(
        launch.command(python, spec["parallel"], arguments),
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(record.read_text())["status"] == "ok"
    for rank in ("0", "1"):
        threads = (tmp_path / ("rank" + rank)).read_text().split()
        assert threads and not [name for name in threads if "gloo" in name], (rank, threads)
