"""The workflow for real: Snakemake on the tests' config (config/test.yaml),
every backend in its own venv, every kind of workload and every dimension,
every table and plot, the report in a browser. These tests read what the
session's workflow made and plan (dry runs) without changing it;
tests/e2e/test_reruns_e2e.py changes a copy of it.
"""

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from packaging.requirements import Requirement

import figures
from dlbench import catalog
from dlbench.analysis import (
    cold_start,
    collect,
    equivalence_predictions,
    equivalence_steps,
    op_categories,
    op_profiles,
    plots_comparisons,
    plots_convergence,
    plots_heat_maps,
    plots_timings,
    python_stacks,
)
from dlbench.analysis import published as published_comparison
from dlbench.environments import variants
from dlbench.models import flops
from dlbench.plan import comparisons, config_registry, matrix, paths
from dlbench.record import record_schema
from dlbench.registry import BUILT_IN
from dlbench.run import equivalence, manifest
from testkit import (
    INVOCATION_TIMEOUT_S,
    NOT_EXERCISED,
    REPO,
    needs_browser,
    run_snakemake,
    write_config,
)
from workflows import TEST_CONFIG, load_test_config

KERAS3 = ["keras-jax", "keras-tensorflow", "keras-torch"]
LEGACY = ["keras-mxnet", "keras2-cntk", "keras2-theano"]
# The backends with cells on a CPU (native-cudnn's are n/a there: tests/unit/test_cudnn.py)
EVERY = sorted(b for b, entry in catalog.BACKENDS.items() if "gpu_only" not in entry)
NATIVE = [b for b in EVERY if b.startswith("native-")]
TRAINERS = sorted(set(EVERY) - {"keras-openvino"})
# The digits workloads' final accuracies are not a test of sameness: a few
# epochs of a dozen steps leave the validation accuracy swinging, and every
# framework draws its own dropout masks. Whether the backends compute the
# same is the equivalence check's question; here every cell must learn.
LEARNED = 0.5  # chance is 0.1
CONFIG = matrix.normalise(load_test_config())
REGISTRY = config_registry.registry_of(CONFIG)


def snakemake(workdir, *args, check=True):
    return run_snakemake(workdir, "--configfile", TEST_CONFIG, *args, check=check)


def runs(model=None):
    return [run for run in matrix.runs(CONFIG) if model in (None, run.model)]


def entry(model):
    (found,) = [w for w in CONFIG["workloads"] if w["model"] == model]
    return found


def load(workdir, run):
    return json.loads((workdir / paths.run_dir(run) / "run.json").read_text())


def record(workdir, model, backend, dataset="digits", **dimensions):
    """The record of the first run of ``model`` on ``backend`` at ``dimensions``."""
    for run in runs(model):
        chosen = {name: getattr(run, name) for name in dimensions}
        if run.backend == backend and run.dataset == dataset and chosen == dimensions:
            return load(workdir, run)
    raise LookupError((model, backend, dimensions))


# OpenVINO's names of the precision its CPU plugin computes in.
OPENVINO_PRECISIONS = {"f32": "float32", "bf16": "bfloat16", "f16": "float16"}


def computed_in(found):
    """The dtype a run computed in, as its record says."""
    settings = found["settings"]
    if "inference_precision" in settings:
        return OPENVINO_PRECISIONS[settings["inference_precision"]]
    return settings["precision"]["compute_dtype"]


def counted_flops(workdir, dataset, model):
    return json.loads((workdir / "results/flops/{}/{}.json".format(dataset, model)).read_text())


def prepared_meta(workdir, dataset):
    with np.load(workdir / "results/data/{}.npz".format(dataset)) as arrays:
        return json.loads(str(arrays["meta"]))


def workflow_drew(workdir, png, figure, **options):
    """``figure``, once the PNG the workflow wrote is it, pixel for pixel:
    the tests draw each figure again from the table the workflow drew it
    from and look at what it shows."""
    assert figures.png_shows(workdir / png, figure, **options), png
    return figure


def results_table(workdir, name):
    """A table the workflow wrote, read as its plotting rules read it."""
    return collect.read_table(workdir / "results" / name)


# Each workload plot: the function that draws it and the table the workflow
# draws it from (workflow/rules/plots.smk).
WORKLOAD_PLOTS = {
    "epoch_time": (plots_timings.epoch_time_figure, "summary.csv"),
    "convergence": (plots_convergence.convergence_figure, "epochs.csv"),
    "latency": (plots_timings.latency_figure, "latencies.csv"),
    "throughput": (plots_timings.throughput_figure, "summary.csv"),
    "scaling": (plots_timings.scaling_figure, "summary.csv"),
    "threads_scaling": (plots_timings.threads_scaling_figure, "summary.csv"),
}
# The bar plots: the summary's column each bar shows, and the bars' legend label.
BARS = {
    "epoch_time": ("headline_median", "steady state (median of epochs 2+)"),
    "throughput": ("seconds_per_1000_samples", None),
}


def workload_figure(workdir, dataset, model, plot):
    """The workflow's results/plots/<dataset>_<model>_<plot>.png: its figure,
    titled by the workload."""
    draw, source = WORKLOAD_PLOTS[plot]
    figure = workflow_drew(
        workdir,
        "results/plots/{}_{}_{}.png".format(dataset, model, plot),
        draw(results_table(workdir, source), dataset, model),
    )
    titles = [figure.get_suptitle()] + [axis.get_title() for axis in figure.axes]
    assert any(title.startswith("{} / {}:".format(dataset, model)) for title in titles), titles
    return figure


def backends_drawn(figure):
    """The backends a workload figure names: its bars' or boxes' tick labels
    (the backend, a line break, the point) and its lines' labels (the
    backend, then the values that vary), the ideal lines' aside."""
    found = set()
    for axis in figure.axes:
        found.update(label.split("\n")[0] for label in figures.tick_labels(axis) if "\n" in label)
        found.update(
            label.split(", ")[0] for label in figures.lines(axis) if not label.startswith("ideal")
        )
    return found


def backends_of(model, plot):
    """The backends a workload plot must name: those that ran the model (on
    devices, for the scaling plot), and, where the plot shows every cell of
    the summary, those whose cell is n/a."""
    found = {run.backend for run in runs(model) if plot != "scaling" or run.devices > 0}
    if plot in BARS:
        found |= {c["backend"] for c in matrix.not_applicable_cells(CONFIG) if c["model"] == model}
    return found


def check_workload_plot(workdir, dataset, model, plot):
    """A workload plot is the figure of the workflow's table, names the
    backends it must, and (bar plots) has a bar of each cell's figure."""
    figure = workload_figure(workdir, dataset, model, plot)
    drawn = backends_drawn(figure)
    if plot == "threads_scaling":  # the cells that recorded the threads they used
        assert drawn and drawn <= backends_of(model, plot), drawn
    else:
        assert drawn == backends_of(model, plot), (plot, drawn ^ backends_of(model, plot))
    if plot in BARS:
        column, label = BARS[plot]
        summary = results_table(workdir, "summary.csv")
        cells = summary[(summary["dataset"] == dataset) & (summary["model"] == model)]
        (axis,) = figure.axes
        heights = [height for height in figures.heights(axis, label) if height == height]
        assert sorted(heights) == sorted(cells[column].dropna()), plot
    return figure


@pytest.fixture(scope="module")
def workdir(ran_workflow):
    return ran_workflow


def test_every_run_writes_a_complete_record(workdir):
    warm = set()
    for run in runs():
        found = load(workdir, run)
        assert found["status"] == "ok", (run, found.get("error"))
        assert record_schema.problems(found) == [], run
        check = found["environment_check"]
        assert (check["mode"], check["mismatches"]) == ("venv", []), run
        # the tests' config: each venv compiled its backend's import once, when built
        assert check["bytecode"] == "first_import", run
        # what the venv installed, as pip froze it: the numpy the run imported,
        # a variant's own pins
        assert check["installed"]["numpy"] == found["runtime"]["numpy"], run
        for pinned, version in variants.variants_of(CONFIG, run.backend)[run.versions].items():
            name = Requirement(pinned).name.lower()
            assert check["installed"][name] == version, (run, name)
        for name in matrix.DIMENSION_NAMES:
            assert found[name] == getattr(run, name), (run, name)
        if REGISTRY.is_custom(run.model):  # the model Keras builds on torch for its FLOPs
            expected = counted_flops(workdir, run.dataset, run.model)["parameters"]
        else:
            expected = REGISTRY.parameter_count(run.model, prepared_meta(workdir, run.dataset))
        assert found["parameters"] == expected, run
        framework = catalog.BACKENDS[run.backend]["framework"]
        if run.backend.startswith("native-"):
            assert found["runtime"]["framework"] == framework
            assert "keras" not in found["runtime"]
        else:
            assert found["runtime"]["keras_backend"] == framework
        python = found["runtime"]["python_executable"]
        assert python.startswith(str(workdir / ".venvs" / run.backend))
        if framework == "jax":  # the tests' config keeps JAX's compiled programs
            cache = str(Path(python).parents[1] / "jax-compilation-cache")
            assert found["settings"]["jax_compilation_cache"] == cache, run
            if found["settings"]["compile_cache_warm"]:
                warm.add(run.backend)
        flags = found["settings"].get("theano_flags") or found["settings"].get("pytensor_flags")
        if framework in ("theano", "pytensor"):  # the config's cxxflags after -g0
            assert "cxxflags=-g0 {}".format(CONFIG["backends"][run.backend]["cxxflags"]) in flags
            assert "cxx={}".format(Path(python).parents[1]) in flags  # precompiled headers
        built = json.loads((Path(python).parents[1] / "ready.json").read_text())
        assert built["warm_up"] == {"status": "ok", "reason": None}, run
        assert found["settings"]["threads"] == found["runtime"]["threads"] == run.threads
        assert found["runtime"]["cpu_isa"]["onednn_level"]
        if found["task"] == "train":
            assert len(found["epochs"]) == found["hyper"]["epochs"]
            assert found["first_epoch_seconds"] > 0 and found["steady_epoch_seconds"] > 0
    # each has more runs than run at once: a later one found what an earlier one compiled
    assert warm == {"keras-jax", "native-jax"}


# Where a framework's loader does not convert a layer yet: the run starts from its own draw.
OWN_START = {
    ("imdb_gru", "native-cntk"): "no CNTK conversion of Keras' Embedding",
    ("resnet50", "native-tensorflow"): "cannot tell a BatchNormalization's four vectors",
}


def test_every_run_starts_from_the_shared_weights(workdir):
    """One file per workload and seed, drawn once (and for LeNet's
    inference trained once from the draw); every run of the cell loaded it
    (its record keeps the file's checksum), but where its framework cannot
    convert a layer yet: then it says why, and its table row says OWN."""
    summary = pd.read_csv(workdir / "results/summary.csv")
    for run in runs():
        started = load(workdir, run)["initial_weights"]
        path = workdir / started["file"]
        drawn = "trained_weights" not in entry(run.model)
        pattern = paths.WEIGHTS if drawn else paths.TRAINED_WEIGHTS
        seed = CONFIG["seed"] + run.repeat - 1
        assert started["file"] == pattern.format(dataset=run.dataset, model=run.model, seed=seed)
        assert ("trained" in started) is not drawn
        assert started["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        if (run.model, run.backend) in OWN_START:
            assert not started["loaded"]
            assert OWN_START[(run.model, run.backend)] in started["reason"]
            row = summary[(summary["model"] == run.model) & (summary["backend"] == run.backend)]
            assert row["initial_weights"].iloc[0].startswith("OWN: ")
        else:
            assert started["loaded"], (run, started.get("reason"))
    table = (workdir / "results/tables/digits_mlp.md").read_text()
    assert "initial_weights" in table and "| shared" in table
    repeats = [record(workdir, "imdb_gru", "keras-jax", "imdb_tiny", repeat=r) for r in (1, 2)]
    assert len({r["initial_weights"]["sha256"] for r in repeats}) == 2  # one draw per seed


def test_every_training_cell_learns(workdir):
    """Every training run's test loss below chance's (ln of the classes):
    the data and the training are real; the digits MLP, trained longest,
    well above chance's accuracy in every compile mode."""
    for run in runs():
        found = load(workdir, run)
        if found["task"] != "train":
            continue
        classes = prepared_meta(workdir, run.dataset)["classes"]
        assert found["test_loss"] < np.log(classes), (run, found["test_loss"])
        if run.model == "mlp":
            assert found["test_accuracy"] > LEARNED, (run, found["test_accuracy"])


def test_recurrent_runs_record_their_kernel_and_bAbI_holds_out_five_percent(workdir):
    babi = record(workdir, "babi_rnn", "keras-torch", "babi_tiny")
    taken, fraction = entry("babi_rnn")["train_samples"], entry("babi_rnn")["validation_split"]
    held_out = taken - int(taken * (1.0 - fraction))
    assert (babi["train_samples"], babi["validation_samples"]) == (taken - held_out, held_out)
    assert babi["test_samples"] == 200
    # Keras 3's torch LSTM takes cuDNN on CUDA only; here its own loop ran
    assert babi["settings"]["recurrent_kernels"]["lstm"].startswith("Keras' torch LSTM loop")
    # what torch really ran, seen by its profiler: no cuDNN on the CPU
    assert babi["recurrent_ops"]["cudnn"] is False
    gru = record(workdir, "imdb_gru", "keras-jax", "imdb_tiny")["settings"]
    assert set(gru["recurrent_kernels"]) == {"gru"}
    # Keras' JAX GRU is a lax.scan on any device (an H200 run said cuDNN before)
    assert gru["recurrent_kernels"]["gru"].startswith("Keras' JAX GRU: one lax.scan")


def test_legacy_systems_run_the_same_models(workdir):
    """Keras 2 on Theano, CNTK and MXNet: Keras 3's parameter counts, their
    settings recorded, their accuracy judged beside Keras 3's."""
    keras3 = record(workdir, "mlp", "keras-jax")
    summary = pd.read_csv(workdir / "results/summary.csv")
    for backend in LEGACY:
        found = record(workdir, "mlp", backend)
        assert found["runtime"]["keras"].startswith("2.")
        assert found["parameters"] == keras3["parameters"]
        assert found["compile"] == "compiled"  # a static graph: their only mode
        row = summary[(summary["model"] == "mlp") & (summary["backend"] == backend)]
        assert set(row.loc[row["status"] == "ok", "accuracy_parity"]) <= {"ok", "outside"}
        assert record(workdir, "lenet", backend)["status"] == "ok"
    theano = record(workdir, "mlp", "keras2-theano")["settings"]
    assert "floatX=float32" in theano["theano_flags"]
    assert record(workdir, "mlp", "keras2-cntk")["runtime"]["python"].startswith("3.6")


def test_inference_run_records(workdir):
    lenet = entry("lenet")
    for backend in EVERY:
        found = record(workdir, "lenet", backend)
        assert found["task"] == "infer" and found["parameters"] == 431080
        assert len(found["latencies_ms"]) == lenet["latency_samples"]
        assert 0 < found["latency_ms"]["p50"] <= found["latency_ms"]["p99"]
        assert found["samples_per_second"] > 0
    for plot in ("latency", "throughput"):
        check_workload_plot(workdir, "imagenet_synthetic", "resnet50", plot)
    openvino = record(workdir, "resnet50", "keras-openvino", "imagenet_synthetic")
    assert openvino["settings"]["inference_precision"] == "f32"  # never OpenVINO's bf16 default
    table = (workdir / "results/tables/digits_lenet.md").read_text()
    assert "p50 latency ms" in table and all("| " + b in table for b in EVERY)
    table = (workdir / "results/tables/imagenet_synthetic_resnet50.csv").read_text()
    assert "s_per_1000" in table


def test_every_backend_predicts_the_same_from_the_same_weights(workdir):
    """LeNet, trained once on the digits by the workflow, infers with the
    same weights on all 14 backends: the same classes and the same
    probabilities to float32 rounding; in bfloat16, each backend's
    probabilities within 0.05 of its float32 ones (8 bits of mantissa) and
    its classes the same but for the few near a tie. ResNet-50 from the
    shared draw where its framework loads it (natives say why not)."""
    table = pd.read_csv(workdir / "results/tables/predictions.csv")
    lenet = table[(table["model"] == "lenet") & (table["precision"] == "float32")]
    lenet = lenet.set_index("backend")
    assert set(lenet.index) == set(EVERY)
    assert (lenet["verdict"] == equivalence_predictions.VERDICT_SAME_PREDICTIONS).all(), lenet[
        "verdict"
    ]
    assert (lenet["classes_differing"] == 0).all() and lenet["classes_sha256"].nunique() == 1
    assert lenet["weights"].str.startswith("trained (keras-torch").all()
    trained = record(workdir, "lenet", "native-mxnet")["initial_weights"]["trained"]
    assert trained["test_accuracy"] > 0.9  # chance is 0.1: the weights were trained
    found = record(workdir, "lenet", "keras2-cntk")
    assert found["predictions"]["samples"] == 64 and found["predictions"]["columns"] == 10
    reduced = [run for run in runs("lenet") if run.precision == "mixed_bfloat16"]
    assert {run.backend for run in reduced} >= set(KERAS3) | {"native-torch", "native-jax"}
    for run in reduced:
        ours = load(workdir, run)
        assert computed_in(ours) == "bfloat16", run
        theirs = load(workdir, run._replace(precision="float32"))
        ours, theirs = (np.array(r["predictions"]["outputs"]) for r in (ours, theirs))
        assert np.abs(ours - theirs).max() <= 0.05, run
        assert np.mean(ours.argmax(axis=1) == theirs.argmax(axis=1)) >= 0.95, run
    resnet = table[table["model"] == "resnet50"].set_index("backend")
    for backend in resnet.index:
        expected = OWN_START.get(("resnet50", backend))
        if expected:
            assert resnet.loc[backend, "verdict"].startswith("not compared: own weights")
            assert expected in resnet.loc[backend, "verdict"], resnet.loc[backend, "verdict"]
    # the workload's table: one verdict a backend, naming the precision that departs
    # (bfloat16 outputs differ between frameworks by more than float32 rounding)
    workload = pd.read_csv(workdir / "results/tables/digits_lenet.csv").set_index("backend")
    for backend, verdict in workload["same_predictions"].items():
        if backend in {run.backend for run in reduced}:
            assert (
                verdict == equivalence_predictions.VERDICT_SAME_PREDICTIONS
                or verdict.startswith("mixed_bfloat16: ")
            ), (backend, verdict)
        else:
            assert verdict == equivalence_predictions.VERDICT_SAME_PREDICTIONS, (backend, verdict)
    assert (
        "Predictions from the same weights"
        in (workdir / "results/tables/predictions.md").read_text()
    )


def test_summary_tables_and_plots(workdir):
    summary = pd.read_csv(workdir / "results/summary.csv")
    cells = {tuple(getattr(run, c) for c in matrix.CELL) for run in runs()}
    ran = summary[summary["status"] != "not_applicable"]
    assert len(ran) == len(cells) and (ran["status"] == "ok").all()
    assert (ran["headline_median"] > 0).all()
    # cells a backend cannot run: shown with the reason, never run, never failed
    not_applicable = summary[summary["status"] == "not_applicable"]
    assert len(not_applicable) == len(matrix.not_applicable_cells(CONFIG))
    assert not_applicable["error"].str.startswith("n/a").all()
    openvino = not_applicable[not_applicable["backend"] == "keras-openvino"]
    # and, on a CPU without AVX-512, its bfloat16 LeNet with this CPU's reason
    on_this_cpu = catalog.BACKENDS["keras-openvino"].precision_cpu_not_applicable("mixed_bfloat16")
    assert set(openvino["error"]) == {"n/a (inference only)"} | ({on_this_cpu} - {None})
    # accuracy parity: judged on every trained cell that has a test accuracy
    # and another backend's beside it at the same point, on data whose labels
    # mean something (not random: REGISTRY.speed_only); on no other cell
    trained = ran[ran["task"] == "train"]
    judged = trained[
        trained["test_accuracy"].notna() & ~trained["dataset"].map(REGISTRY.speed_only).astype(bool)
    ]
    peers = judged.groupby(matrix.cell_columns("backend"), dropna=False)["backend"]
    compared = judged[peers.transform("size") >= 2]
    assert len(compared) > len(trained) / 2  # most: the one-backend points are few
    assert compared["accuracy_parity"].isin(["ok", "outside"]).all(), compared[
        ["model", "backend", "accuracy_parity"]
    ]
    assert trained.drop(index=compared.index)["accuracy_parity"].isna().all()
    metrics = pd.read_csv(workdir / "results/metrics.csv")
    assert len(metrics) == len(runs())
    assert set(metrics["backend"]) == set(CONFIG["backends"])
    for workload in CONFIG["workloads"]:
        dataset, model = workload["dataset"], workload["model"]
        table = (workdir / "results/tables/{}_{}.md".format(dataset, model)).read_text()
        assert all("| " + run.backend in table for run in runs(model))
        if workload["task"] == "train":
            assert "accuracy_parity" in table
        for plot in matrix.plots(CONFIG, workload):
            check_workload_plot(workdir, dataset, model, plot)


def test_native_backends_train_the_same_models_as_keras(workdir):
    """Every native backend, each in its own venv, through the same
    harness: Keras' parameter counts, the settings that ran recorded."""
    assert sorted(b for b in CONFIG["backends"] if b.startswith("native-")) == NATIVE
    for backend in NATIVE:
        for model in ("mlp", "lenet"):
            found = record(workdir, model, backend)
            assert found["parameters"] == BUILT_IN.models[model]["parameters"], (backend, model)
            assert found["settings"], backend


# Where the timed runs compute other than Keras 3 on the digits workloads
# (their records' settings.own_rules): RMSprop with epsilon after the square
# root (Keras 2 on Theano and CNTK, torch.optim) or CNTK's own epsilon (the
# mlp); on PyTensor, max pooling's gradient to every tied maximum (the cnn:
# the tests' config leaves Keras 2 on Theano's out, whose two rules of its
# own test_equivalence_mistakes.py measures). The check's settings make
# each vanish: they take the same steps as every other backend.
OWN_RULES = {
    "mlp": {"keras2-cntk", "keras2-theano", "native-torch", "native-cntk"},
    "cnn": {"native-pytensor"},
}


def test_every_backend_takes_the_same_steps_from_the_same_weights(workdir):
    """The equivalence check on the digits workloads: every backend follows
    the median's curve for all its steps, those whose timed runs have rules
    of their own too (the check's settings make them vanish; own_rules still
    names them); every backend draws the same dropout (Chainer's, through
    iDeep, drew one mask at every call before its layers went around iDeep
    for dropout: chainer_layers.dropout)."""
    table = pd.read_csv(workdir / "results/tables/equivalence.csv")
    checked = {(run.dataset, run.model, run.backend) for run in comparisons.check_runs(CONFIG)}
    assert {(d, m) for d, m, _ in checked} == {("digits", "mlp"), ("digits", "cnn")}
    assert {b for _, _, b in checked} == set(TRAINERS)
    assert set(zip(table["dataset"], table["model"], table["backend"])) == checked
    for run in comparisons.check_runs(CONFIG):
        found = json.loads((workdir / paths.check_dir(run) / "check.json").read_text())
        assert record_schema.problems(found) == [], run
        assert found["status"] == "ok", (run, found.get("error"))
        assert found["initial_weights"]["loaded"], run
        assert len(found["check"]["losses"]) == CONFIG["equivalence_check"]["steps"] + 1
        assert found["check"]["settings"]["input_jitter"] == equivalence.INPUT_JITTER
        assert len(found["check"]["dropout_draws"]["squared"]) == equivalence.DROPOUT_DRAWS
    rows = table.set_index(["model", "backend"])
    for model, own in OWN_RULES.items():
        found = rows.loc[model]
        assert set(found.index[found["own_rules"].notna()]) == own, model
        assert (found["first_step_beyond_tolerance"].isna()).all(), found
        assert (found["verdict"] == equivalence_steps.VERDICT_SAME).all(), found
    # step 0: the same forward pass from the same weights, to float32 rounding
    initial = table.groupby("model")["initial_loss"]
    assert ((initial.max() - initial.min()) / initial.min() < 1e-5).all(), initial.describe()
    workload = pd.read_csv(workdir / "results/tables/digits_mlp.csv")
    assert set(workload["same_steps"].dropna()) <= set(table["verdict"])
    assert (
        "Do the backends take the same steps?"
        in (workdir / "results/tables/equivalence.md").read_text()
    )


def test_abstraction_cost_and_lines_of_code_tables(workdir):
    """Keras / native slowdowns with intervals for every pair on the
    workloads both run; lines of code for every implementation the config
    runs."""
    cost = pd.read_csv(workdir / "results/tables/abstraction_cost.csv")
    pairs = catalog.keras_native_pairs(set(CONFIG["backends"]))
    assert len(pairs) >= 6
    for keras, native in pairs:
        rows = cost[(cost["keras_backend"] == keras) & (cost["native_backend"] == native)]
        assert {"mlp", "lenet"} <= set(rows["model"]), (keras, native)
        assert (rows["slowdown_ci_low"] <= rows["slowdown"]).all()
        assert (rows["slowdown"] <= rows["slowdown_ci_high"]).all()
        assert (rows["slowdown"] > 0).all()
    lenet = cost[cost["model"] == "lenet"]
    assert set(lenet["measure"]) == {"p50 latency ms"}
    assert (lenet["native_samples"] == entry("lenet")["latency_samples"]).all()
    table = (workdir / "results/tables/abstraction_cost.md").read_text()
    assert all("{} / {}".format(keras, native) in table for keras, native in pairs)

    counted = pd.read_csv(workdir / "results/tables/lines_of_code.csv")
    ran = {(run.dataset, run.model, run.backend) for run in runs()}
    # and native-cudnn's LeNet, which needs a GPU to run but not to be counted
    cudnn = {
        (e["dataset"], "lenet", "native-cudnn")
        for e in CONFIG["workloads"]
        if e["model"] == "lenet"
    }
    assert set(zip(counted["dataset"], counted["model"], counted["backend"])) == ran | cudnn
    assert (counted["lines"] == counted["model_lines"] + counted["program_lines"]).all()
    assert (counted["model_lines"] > 0).all() and (counted["program_lines"] > 0).all()
    assert set(counted["implementation"]) == {"Keras", "native"}
    keras = counted[counted["implementation"] == "Keras"]
    assert (keras["lines_vs_keras"] == 1.0).all()
    shown = (workdir / "results/tables/lines_of_code.md").read_text()
    assert "the published comparison (source 004) has cuDNN > TensorFlow > Keras" in shown
    # the plots: a point a pair and workload at its slowdown, a framework a colour;
    # a panel a workload, a bar an implementation, its model's lines below
    figure = workflow_drew(
        workdir,
        "results/plots/abstraction_cost.png",
        plots_comparisons.abstraction_cost_figure(
            results_table(workdir, "tables/abstraction_cost.csv")
        ),
    )
    (axis,) = figure.axes
    drawn = [x for xs, _ in figures.points(axis).values() for x in xs]
    assert sorted(drawn) == sorted(cost["slowdown"])
    assert {text.get_text() for text in axis.get_legend().get_texts()} == set(cost["framework"])
    figure = workflow_drew(
        workdir,
        "results/plots/lines_of_code.png",
        plots_comparisons.lines_of_code_figure(results_table(workdir, "tables/lines_of_code.csv")),
    )
    panels = figures.visible_axes(figure)
    assert len(panels) == len(counted[["dataset", "model"]].drop_duplicates())
    for axis in panels:
        dataset, model = axis.get_title().split(" / ")
        rows = counted[(counted["dataset"] == dataset) & (counted["model"] == model)]
        assert sorted(figures.tick_labels(axis)) == sorted(rows["backend"])
        assert sorted(figures.heights(axis, "model")) == sorted(rows["model_lines"])
        assert sorted(int(text) for text in figures.texts(axis)) == sorted(rows["lines"])


def test_statistics_over_repeats(workdir):
    """The IMDB GRU runs two repeats a cell: every cell gets an interval, a
    noise figure and a tested difference from the fastest; single-repeat
    workloads are listed as not tested."""
    summary = pd.read_csv(workdir / "results/summary.csv")
    gru = summary[(summary["model"] == "imdb_gru") & (summary["status"] == "ok")]
    repeats = entry("imdb_gru")["repeats"]
    assert repeats >= 2 and len(gru) == len(entry("imdb_gru")["backends"])
    assert (gru["runs_ok"] == repeats).all() and gru["ci_level"].eq(1 - 2 * 0.5**repeats).all()
    assert (gru["headline_ci_low"] <= gru["headline_median"]).all()
    assert (gru["headline_median"] <= gru["headline_ci_high"]).all()
    assert gru["headline_cv"].notna().all()
    assert (gru["noisy"] == (gru["headline_cv"] > 0.1)).all()
    assert (gru["vs_fastest"] == "fastest").sum() == 1
    assert set(gru["vs_fastest"]) - {"fastest"} <= {"slower", "not different"}
    single = summary[(summary["model"] == "babi_rnn") & (summary["status"] == "ok")]
    assert single["headline_cv"].isna().all() and single["noisy"].isna().all()
    assert set(single["vs_fastest"]) == {"fastest"}

    pairs = pd.read_csv(workdir / "results/tables/significance.csv")
    tested = pairs[pairs["p_holm"].notna()]
    backends = len(gru)
    assert len(tested) == backends * (backends - 1) // 2
    assert set(tested["model"]) == {"imdb_gru"} and (tested["p_holm"] >= tested["p_value"]).all()
    assert (tested["ratio_ci_low"] <= tested["ratio"]).all()
    assert (tested["significant"] == (tested["p_holm"] < 0.05)).all()
    table = (workdir / "results/tables/imdb_tiny_imdb_gru.md").read_text()
    assert "CPU: vs fastest" in table
    assert table.count("significant, p=") == backends - 1  # "not significant" included


def test_every_compile_mode_and_precision_runs_and_the_record_says_what_ran(workdir):
    """The digits MLP eager and compiled on every backend at every mode it
    has; LeNet's inference and CIFAR-10's CNN in float32 and mixed_bfloat16.
    Where this CPU has no kernels for a precision (MXNet's bfloat16 below
    AVX-512) the cell is n/a with the reason, never a failed run."""
    modes = {(run.backend, run.compile) for run in runs("mlp")}
    assert {backend for backend, _ in modes} == set(TRAINERS)
    for backend, mode in modes:
        found = record(workdir, "mlp", backend, compile=mode)
        assert found["compile"] == mode
        settings = found["settings"]
        if "jit_compile" in catalog.BACKENDS[backend].compile_settings(mode):
            key = "torch_compile" if backend == "native-torch" else "jit_compile"
            assert settings[key] is (mode == "compiled"), (backend, mode, settings)
        if "torch" in backend and (settings.get("torch_compile") or settings.get("jit_compile")):
            assert settings["torch_compile_shapes"].endswith("(torch's default)"), settings
            # Inductor's precompiled headers in the environment's cache, not /tmp's
            headers = Path(settings["torch_precompiled_headers"])
            assert headers.parent == Path(settings["torch_compile_cache"]), settings
            assert any(headers.rglob("*.gch")), headers
        if "hybridize" in catalog.BACKENDS[backend].compile_settings(mode):
            assert bool(settings["hybridize"]) is (mode == "compiled"), (backend, settings)
        if backend in KERAS3:
            assert settings["precision"]["compute_dtype"] == "float32"
    assert {b for b, mode in modes if mode == "eager"} >= set(KERAS3) - {"keras-jax"}
    reduced = [run for run in runs() if run.precision == "mixed_bfloat16"]
    assert {(run.model, run.backend) for run in reduced} >= {
        ("lenet", backend) for backend in KERAS3 + ["native-torch", "native-jax"]
    } | {("cifar_cnn", "native-torch")}
    for run in reduced:
        found = load(workdir, run)
        assert found["precision"] == "mixed_bfloat16" and computed_in(found) == "bfloat16", run
        if "precision" in found["settings"]:
            assert found["settings"]["precision"]["variable_dtype"] == "float32", run
    summary = pd.read_csv(workdir / "results/summary.csv")
    cells = summary.set_index(["model", "backend", "precision", "compile", "versions"])
    for backend, mode in (("keras-jax", "eager"), ("native-chainer", "compiled")):
        cell = ("mlp", backend, "float32", mode, variants.PINNED)
        assert cells.loc[cell, "status"] == "not_applicable", cell
    left_out = cells.loc[("mlp", "keras-torch", "float32", "compiled", variants.PINNED)]
    assert left_out["status"] == "not_applicable"  # the tests' config excludes it
    assert left_out["error"] == "n/a (left out by the config: exclude backend=keras-torch, " + (
        "compile=compiled)"
    )
    ran = summary[(summary["precision"] == "mixed_bfloat16") & (summary["status"] == "ok")]
    said = ran["precision_ran"]
    assert (said.str.startswith("bfloat16 compute") | (said == "bf16 (OpenVINO)")).all(), said
    mxnet = cells.loc[("lenet", "native-mxnet", "mixed_bfloat16", "auto", variants.PINNED)]
    cpu_reason = catalog.BACKENDS["native-mxnet"].precision_cpu_not_applicable("mixed_bfloat16")
    if cpu_reason:  # this CPU has no kernels for it: known before the run, never a failure
        assert mxnet["status"] == "not_applicable" and mxnet["error"] == cpu_reason
        NOT_EXERCISED["native-mxnet mixed_bfloat16"] = cpu_reason
    else:
        assert mxnet["status"] == "ok"


def test_the_speedups_are_tabled_for_every_mode(workdir):
    """Each cell against its backend's float32 eager (or first) mode: the
    speed-up with its interval, the accuracy change against float32 flagged
    past the tolerance, what compiling costs the first epoch."""
    found = pd.read_csv(workdir / "results/tables/speedups.csv")
    modes = {
        (run.model, run.backend, run.precision, run.compile)
        for run in runs()
        if (run.precision, run.compile) != ("float32", "auto")
    }
    shown = set(zip(found["model"], found["backend"], found["precision"], found["compile"]))
    assert modes <= shown
    assert (found["speedup_ci_low"] <= found["speedup"]).all()
    assert (found["speedup"] <= found["speedup_ci_high"]).all()
    reduced = found[(found["precision"] == "mixed_bfloat16") & (found["task"] == "train")]
    assert len(reduced) and reduced["accuracy_change"].notna().all()
    flagged = reduced["accuracy_change"].abs() > CONFIG["accuracy_tolerance"]
    assert (reduced["accuracy_flag"].str.startswith("OFF") == flagged).all(), reduced
    mlp = found[found["model"] == "mlp"]
    baselines = mlp.groupby("backend")["baseline"].first().to_dict()
    assert baselines["keras-tensorflow"] == "float32, compile=eager"
    assert baselines["keras-jax"] == "float32, compile=compiled"  # JAX has no eager mode
    compiled = mlp[(mlp["compile"] == "compiled") & (mlp["backend"] == "keras-tensorflow")]
    assert compiled["first_epoch_extra_seconds"].notna().all()
    table = (workdir / "results/tables/speedups.md").read_text()
    assert "compiled" in table and "mixed_bfloat16" in table and "float32, eager" in table
    figure = workflow_drew(
        workdir,
        "results/plots/speedups.png",
        plots_comparisons.speedups_figure(results_table(workdir, "tables/speedups.csv")),
    )
    drawn = figures.points(figure.axes[0])  # a series a precision and mode, a point a cell
    assert set(drawn) == {
        "{}, {}".format(*mode) for mode in zip(found["precision"], found["compile"])
    }
    assert sorted(x for xs, _ in drawn.values() for x in xs) == sorted(found["speedup"])


def test_an_older_release_is_a_cell_of_its_own_set_against_the_pinned(workdir):
    """keras-jax on an older JAX beside its pinned one (config/test.yaml's
    versions, on the digits MLP): its own environment built from the env
    file with the variant's pins, its own records, check and table rows; the
    versions table sets the newer against the older with its interval, the
    steps of both and what the two environments install differently."""
    (variant,) = variants.variants_of(CONFIG, "keras-jax").keys() - {variants.PINNED}
    environment = "keras-jax@" + variant
    built = json.loads((workdir / ".venvs" / environment / "ready.json").read_text())
    assert built["status"] == "ok", built
    assert "jax==0.9.2" in built["pip_freeze"] and "keras==3.15.1" in built["pip_freeze"]
    older = record(workdir, "mlp", "keras-jax", versions=variant)
    pinned = record(workdir, "mlp", "keras-jax", versions=variants.PINNED)
    assert older["status"] == "ok" and older["environment_name"] == environment
    assert (older["versions"], pinned["versions"]) == (variant, variants.PINNED)
    assert older["runtime"]["framework_version"] == "0.9.2"
    assert pinned["runtime"]["framework_version"] != "0.9.2"
    assert older["initial_weights"]["sha256"] == pinned["initial_weights"]["sha256"]
    # no other workload or backend has a cell at the variant
    assert {(r.model, r.backend) for r in runs() if r.versions == variant} == {("mlp", "keras-jax")}
    found = pd.read_csv(workdir / "results/tables/versions.csv")
    (row,) = found.to_dict("records")
    assert (row["older"], row["newer"]) == (variant, variants.PINNED)
    assert row["older_versions"].startswith("jax 0.9.2")
    assert row["speedup_ci_low"] <= row["speedup"] <= row["speedup_ci_high"]
    assert isinstance(row["significant"], bool)
    assert row["same_steps"] in (True, False) and row["largest_step_difference"] >= 0
    assert "jax 0.9.2 -> " in row["installed_differences"]
    assert "jaxlib 0.9.2 -> " in row["installed_differences"]
    # asv's verdict at the default factor, and where the op profiles saw the time go
    assert row["verdict"] in ("faster", "slower", "same") and row["factor"] == 1.1
    assert 0 <= row["mann_whitney_p"] <= 1
    assert isinstance(row["op_changes"], str) and row["op_changes"]
    shown = (workdir / "results/tables/versions.md").read_text()
    assert "Is the new release faster?" in shown and "jax 0.9.2" in shown
    assert "Mann-Whitney" in shown and "1.1" in shown
    # two releases are a pair, not a series
    assert pd.read_csv(workdir / "results/tables/version_history.csv").empty
    figure = workflow_drew(
        workdir,
        "results/plots/versions.png",
        plots_comparisons.versions_figure(results_table(workdir, "tables/versions.csv")),
    )
    (axis,) = figure.axes
    drawn = figures.points(axis)
    assert drawn["significant" if row["significant"] else "not significant"][0] == [row["speedup"]]
    (name,) = figures.tick_labels(axis, "y")
    assert name.endswith("keras-jax: {older_versions} -> {newer_versions}".format(**row)), name
    # the variant's check is set against the median of the backends' pinned versions
    checks = pd.read_csv(workdir / "results/tables/equivalence.csv")
    mine = checks[(checks["model"] == "mlp") & (checks["backend"] == "keras-jax")]
    assert set(mine["versions"]) == {variants.PINNED, variant}
    assert set(mine["reference"]) == {"median of {} backends".format(len(TRAINERS))}


def test_emulated_devices_train_data_parallel_like_one_device(workdir):
    """The digits CNN on 2 devices emulated on the CPU: the data-parallel code
    of every backend that has one (DataParallel, MirroredStrategy, DDP under
    torchrun with gloo, keras-mxnet's executors) keeps the replicas' weights
    equal; one device (a backend of each launcher at two: the tests' config
    leaves out the others' one-device runs) runs the single-device program,
    in one process without a launcher or a data-parallel wrapper, follows
    the two devices' loss trajectory and scaling figures come out; the
    backends that train on one device show n/a with the reason."""
    cnn = runs("cnn")
    parallel = sorted({run.backend for run in cnn if run.devices == 2})
    assert set(KERAS3) | {"keras-mxnet", "native-torch"} <= set(parallel)
    one_device = sorted({run.backend for run in cnn if run.devices == 1})
    launches = {catalog.BACKENDS[b]["data_parallel"]["launch"] for b in one_device}
    assert launches == {"one_process", "process_per_device"}
    for backend in one_device:
        one = record(workdir, "cnn", backend, devices=1)
        assert one["parallel"]["launch"] == "one_process"
        assert one["parallel"]["method"] == catalog.SINGLE_DEVICE
        assert one["settings"]["data_parallel"]["processes"] == 1
        assert "process_group_backend" not in one["settings"]  # no torchrun, no DDP
        assert one["replica_max_abs_weight_diff"] is None  # one copy of the weights
    batch = entry("cnn")["batch_size"]
    for backend in parallel:
        two = record(workdir, "cnn", backend, devices=2)
        assert two["replica_max_abs_weight_diff"] <= 1e-6, backend
        assert two["parallel"]["per_device_batch"] == batch // 2
        assert two["parallel"]["global_batch"] == batch
        # the config's train_samples: every process saw its share of those
        assert two["train_samples"] == entry("cnn")["train_samples"]
        launch = catalog.BACKENDS[backend]["data_parallel"]["launch"]
        processes = 2 if launch == "process_per_device" else 1
        assert two["settings"]["data_parallel"]["processes"] == processes
        assert two["settings"]["data_parallel"]["accelerator"] == "emulated-cpu"
        assert two["runtime"]["cuda_visible_devices"] == ""
    for backend in one_device:
        one, two = (record(workdir, "cnn", backend, devices=n) for n in (1, 2))
        assert one["parallel"]["global_batch"] == batch
        assert one["train_samples"] == two["train_samples"]
        # the same optimisation: losses close epoch by epoch (dropout masks
        # differ between one device and two)
        for a, b in zip(one["epochs"], two["epochs"]):
            assert abs(a["loss"] - b["loss"]) <= 0.25 * a["loss"] + 0.1, (backend, a, b)
    summary = pd.read_csv(workdir / "results/summary.csv")
    two_devices = summary[(summary["model"] == "cnn") & (summary["devices"] == 2)]
    two_devices = two_devices.set_index("backend")
    assert two_devices.loc[one_device, "scaling_efficiency"].notna().all()
    assert set(two_devices["accelerator"]) == {"emulated-cpu"}
    assert "trains on one device" in two_devices.loc["keras2-theano", "error"]
    assert two_devices.loc["keras2-cntk", "status"] == "not_applicable"
    table = (workdir / "results/tables/digits_cnn.md").read_text()
    assert "2 emulated dev: scaling efficiency" in table


def test_every_record_carries_its_manifest_and_a_setting_apart_is_flagged(workdir):
    """Each backend's runs record the hidden settings read back from the
    framework (settings.manifest); the tests' config asks native torch for
    deterministic algorithms on the digits MLP alone, and the tables say so
    in that cell, and only there."""
    for found in (load(workdir, run) for run in runs()):
        if found["status"] != "ok":
            continue
        found_manifest = found["settings"]["manifest"]
        assert set(manifest.COMPARED) <= set(found_manifest), found["backend"]
        if found.get("precision", "float32") == "float32":
            observed = found_manifest["float32_observed"]
            assert observed == "ieee" or observed.startswith("n/a"), found["backend"]
        threads = found["runtime"]["threads"]
        assert found_manifest["intra_op_threads"] == threads, found["backend"]
    summary = pd.read_csv(workdir / "results/summary.csv")
    torch = summary[(summary["backend"] == "native-torch") & (summary["status"] == "ok")]
    flagged = torch.set_index(["model", "compile"])["hidden_settings_differ"]
    assert "deterministic True (best: False)" in flagged[("mlp", "eager")]
    others = torch[torch["model"] != "mlp"]["hidden_settings_differ"].dropna()
    assert not others.str.contains("deterministic").any()
    table = (workdir / "results/tables/digits_mlp.md").read_text()
    assert "deterministic True (best: False)" in table
    listed = pd.read_csv(workdir / "results/tables/manifest.csv")
    assert set(TRAINERS) <= set(listed["backend"])


def test_each_run_is_pinned_to_its_thread_count(workdir):
    for threads in (1, 2):
        found = record(workdir, "cifar_cnn", "native-torch", "cifar10_tiny", threads=threads)
        assert found["runtime"]["threads"] == threads
        assert len(found["runtime"]["cpus_pinned"]) == threads
    figure = check_workload_plot(workdir, "cifar10_tiny", "cifar_cnn", "threads_scaling")
    torch = [
        x
        for axis in figure.axes
        for label, (x, _) in figures.lines(axis).items()
        if label.split(", ")[0] == "native-torch"
    ]
    assert any({1.0, 2.0} <= set(x) for x in torch), torch  # a line through both counts


def test_a_model_of_your_own_runs_like_a_built_in_one(workdir):
    """The example Transformer named in the config: its parameters from the
    built model, its FLOPs counted, in the tables and plots of every workload."""
    counted = counted_flops(workdir, "imdb_tiny", "imdb_transformer")
    assert counted["counter"].startswith("torch.utils.flop_counter.FlopCounterMode on Keras")
    # embeddings 30,000 x 32 and 150 x 32; attention 4 x (32 x 32 + 32); two layer
    # norms; feed-forward 32 -> 64 -> 32; the classifier 32 -> 2
    assert counted["parameters"] == 960000 + 4800 + 4224 + 2 * 64 + 2112 + 2080 + 66
    digest = hashlib.sha256((workdir / "examples/imdb_transformer.py").read_bytes()).hexdigest()
    for run in runs("imdb_transformer"):
        found = load(workdir, run)
        assert found["custom_model"] == {
            "file": "examples/imdb_transformer.py",
            "builder": "build",
            "inputs": ["words150"],
            "sha256": digest,
        }
        assert found["parameters"] == counted["parameters"]
    used = pd.read_csv(workdir / "results/tables/utilisation.csv")
    used = used[used["model"] == "imdb_transformer"]
    assert (used["training_gflops_per_sample"] == counted["training"] / 1e9).all()
    assert (used["mfu"] > 0).all()
    for plot in ("epoch_time", "convergence"):
        check_workload_plot(workdir, "imdb_tiny", "imdb_transformer", plot)


def test_overview_tables_and_plots(workdir):
    environment = pd.read_csv(workdir / "results/tables/environment.csv")
    assert set(environment["backend"]) == set(CONFIG["backends"])
    assert environment["version"].notna().all() and environment["Python"].notna().all()
    assert (environment["CPU matmul GFLOP/s"] > 0).all()
    assert environment["threads"].notna().all()
    assert record(workdir, "lenet", "keras-jax")["runtime"]["matmul_probe"]["size"] == 1024
    probes = sorted((workdir / "results/probes").glob("*/threads=*/*.json"))
    assert probes
    for path in probes:  # the CPU's probes, up to the config's largest product
        probed = json.loads(path.read_text())
        assert probed["largest_size"] == CONFIG["probe_largest_size"], path
        assert max(size["size"] for size in probed["sizes"]) <= probed["largest_size"], path

    comparison = pd.read_csv(workdir / "results/tables/published_comparison.csv")
    published = published_comparison.read(REPO / "workflow/resources/published_results.csv")
    assert set(comparison["source"]) == set(published["source"])
    assert comparison["source"].str.endswith(("(source 002)", "(source 003)")).all()
    measured = comparison[comparison["our_value"].notna()]
    assert {"mnist_mlp", "imdb_gru", "resnet50_features"} <= set(measured["workload"])
    assert measured["our_hardware"].str.startswith("CPU").all()
    assert (measured["our_relative_common"] >= 1).all()
    used = pd.read_csv(workdir / "results/tables/utilisation.csv")
    summary = pd.read_csv(workdir / "results/summary.csv")
    assert len(used) == (summary["status"] == "ok").sum()
    for (dataset, model), cells in used.groupby(["dataset", "model"]):
        if REGISTRY.is_custom(model):
            expected = counted_flops(workdir, dataset, model)
        else:
            expected = flops.per_sample_of(workdir / "results/data/{}.npz".format(dataset), model)
        assert (cells["forward_gflops_per_sample"] == expected["forward"] / 1e9).all()
    assert (used["achieved_gflops"] > 0).all()
    # against the cell's peak (dlbench.analysis.utilisation._peak): no cell outruns it by much
    assert used["mfu"].between(0, 1.2).all(), used.loc[used["mfu"] > 1.2, ["backend", "mfu"]]
    # time to first step: every run that finished, every stage, on every backend
    cold = pd.read_csv(workdir / "results/tables/cold_start.csv")
    assert len(cold) == summary["status"].isin(["ok", "partial"]).sum()
    trained = cold[cold["task"] == "train"]
    assert set(trained["backend"]) == set(TRAINERS)
    assert (trained["first_step_seconds"] > 0).all(), trained[["backend", "first_step_seconds"]]
    assert (trained["first_epoch_rest_seconds"] >= 0).all()
    assert (cold.loc[cold["task"] == "infer", "first_call_seconds"] > 0).all()
    assert (cold["launch_seconds"] > 0).all() and (cold["to_first_step_seconds"] > 0).all()

    # whether runs found compiled code of earlier ones: Theano's ops always, JAX's programs in
    # the tests' config, native torch's kernels only where it compiled; TensorFlow keeps none
    def cache(backend, compile=None):
        rows = (cold["backend"] == backend) & (compile is None or cold["compile"] == compile)
        assert rows.any(), (backend, compile)
        return cold.loc[rows, "compile_cache"]

    assert cache("keras2-theano").notna().all() and cache("keras-jax").notna().all()
    assert cache("native-torch", "compiled").notna().all()
    assert cache("native-torch", "eager").isna().all()
    assert cache("native-tensorflow").isna().all()
    assert set(cold["compile_cache"].dropna()) <= {"warm", "cold"} | {
        "warm in {} of {}".format(k, n) for n in range(2, 4) for k in range(1, n)
    }
    # the overview's plots (speedups.png: test_the_speedups_are_tabled_for_every_mode)
    cells = results_table(workdir, "summary.csv")
    figure = workflow_drew(
        workdir, "results/plots/relative_speed.png", plots_heat_maps.relative_speed_figure(cells)
    )
    axis = figure.axes[0]  # a row a backend, a column a workload and point
    assert figures.tick_labels(axis, "y") == sorted(set(cells["backend"]))
    assert len(axis.texts) == len(cells)  # every cell: its ratio, or why it has none
    coloured = axis.images[0].get_array().compressed()
    assert sorted(coloured) == sorted(cells["relative_to_fastest"].dropna())
    figure = workflow_drew(
        workdir,
        "results/plots/published_comparison.png",
        published_comparison.figure_of(results_table(workdir, "tables/published_comparison.csv")),
    )
    titles = [axis.get_title().split(" (ours: ")[0] for axis in figure.axes]
    assert titles == sorted(set(measured["workload"]))  # a panel a workload we measured
    for axis in figure.axes:
        assert any(label.startswith("ours: CPU") for label in figures.lines(axis)), axis.get_title()
    figure = workflow_drew(
        workdir,
        "results/plots/utilisation.png",
        plots_heat_maps.utilisation_figure(results_table(workdir, "tables/utilisation.csv")),
    )
    axis = figure.axes[0]
    assert figures.tick_labels(axis, "y") == sorted(set(used["backend"]))
    assert sorted(axis.images[0].get_array().compressed()) == sorted(used["mfu"].dropna())
    figure = workflow_drew(
        workdir,
        "results/plots/cold_start.png",
        cold_start.figure_of(results_table(workdir, "tables/cold_start.csv")),
    )
    workloads = {"{}/{}".format(d, m) for d, m in zip(cold["dataset"], cold["model"])}
    assert {axis.get_title(loc="left") for axis in figure.axes} == workloads  # a panel each
    launched = [width for axis in figure.axes for width in figures.widths(axis, "process start")]
    assert sorted(launched) == sorted(
        round(float(seconds), 3) for seconds in cold["launch_seconds"]
    )


def test_every_run_says_where_its_step_goes_op_by_op(workdir):
    """Every timed run took its op profile after its clocks, from its
    framework's own profiler: every cell has a row; a cell without a profile
    is one whose devices run in one process each; the categories plus the
    unexplained rest add up to the window's step; the ops explain part of it;
    the gaps, the per-workload plots and the front page read from it; and no
    window counts among the timed figures."""
    found = pd.read_csv(workdir / "results/tables/ops.csv")
    cells = {(run.dataset, run.model, run.backend, run.devices, run.compile) for run in runs()}
    assert (
        set(zip(*(found[c] for c in ("dataset", "model", "backend", "devices", "compile"))))
        == cells
    )
    missing = found[found["reason"].notna()]
    assert missing["reason"].str.contains("one process each").all(), missing["reason"].tolist()
    profiled = found[found["reason"].isna()]
    assert len(profiled) > len(found) / 2
    keys = [key + "_ms" for key in op_categories.CATEGORY_KEYS] + ["unexplained_ms"]
    added = profiled[keys].sum(axis=1)
    tolerance = op_profiles.SUM_TOLERANCE * profiled["window_ms_per_step"]
    assert ((added - profiled["window_ms_per_step"]).abs() <= tolerance).all()
    assert (
        (profiled["coverage"] > 0) & (profiled["coverage"] <= 1 + op_profiles.SUM_TOLERANCE)
    ).all()
    assert set(profiled["backend"]) == set(EVERY)  # every framework's own profiler ran
    assert (profiled["profiler_cost"] > 0).all()
    gaps = pd.read_csv(workdir / "results/tables/op_gaps.csv")
    assert len(gaps) and (gaps["times_slower"] >= 1).all()
    ops = results_table(workdir, "tables/ops.csv")
    parts = [op_categories.CATEGORY_NAMES[key] for key in op_categories.CATEGORY_KEYS]
    parts.append(op_categories.CATEGORY_NAMES[op_categories.UNEXPLAINED])
    for dataset, model in {(run.dataset, run.model) for run in runs()}:
        figure = workflow_drew(
            workdir,
            "results/plots/{}_{}_ops.png".format(dataset, model),
            op_profiles.figure_of(ops, dataset, model),
        )
        cells = ops[(ops["dataset"] == dataset) & (ops["model"] == model)]
        cells = cells[cells["window_ms_per_step"].notna()]
        # a bar a profiled cell, split by category
        shows_stacked_bars(figure, cells, parts if len(cells) else [], (dataset, model))
    assert "Why slower, op by op" in (workdir / "results/report/front_page.rst").read_text()
    metrics = pd.read_csv(workdir / "results/metrics.csv")
    mlp = metrics[(metrics["model"] == "mlp") & (metrics["machine"] == runs()[0].machine)]
    assert len(mlp) == len(runs("mlp"))  # the timed runs only


def shows_stacked_bars(figure, cells, parts, where):
    """``figure`` has a bar for each of ``cells``, named by its backend, split
    into ``parts`` (plots_stacked_bars.stacked_bars_figure)."""
    (axis,) = figure.axes
    named = [label.split(" (")[0] for label in figures.tick_labels(axis, "y")]
    assert sorted(named) == sorted(cells["backend"]), where
    assert list(figures.bars(axis)) == parts, where


@pytest.mark.parametrize("model, category", [("mlp", "matmul"), ("cnn", "convolution")])
def test_a_known_op_mix_comes_first(workdir, model, category):
    """A stack of dense layers spends its computing ops in matrix products, a
    stack of convolutions in convolutions: among the computing categories
    (data movement and other ops hold the input pipeline and the runtime's
    bookkeeping) that one is the largest or close to it on every backend
    that trains the workload with its ops named (MXNet names Gluon's and
    keras-mxnet's bulk segments by their first operators: its CNN's backward
    counts as matrix products)."""
    found = pd.read_csv(workdir / "results/tables/ops.csv")
    cells = found[(found["model"] == model) & found["reason"].isna()]
    assert len(cells)
    not_computing = [op_categories.OTHER, op_categories.DATA_MOVEMENT]
    keys = [key + "_ms" for key in op_categories.CATEGORY_KEYS if key not in not_computing]
    for _, cell in cells.iterrows():
        largest = cell[keys].max()
        assert cell[category + "_ms"] >= 0.5 * largest, (cell["backend"], cell[keys].to_dict())


@needs_browser
def test_python_stacks_say_where_each_sampled_cells_time_goes(workdir):
    """The python stacks the config asks for (a Keras, a native and a Python
    3.6 backend's training, and inference): each took samples inside the
    clock, its layers' shares add up, Keras' share is zero on native
    backends, its flame graph is drawn, and no python stacks run counts among
    the timed runs."""
    found = pd.read_csv(workdir / "results/tables/python_stacks.csv")
    sampled = {(run.dataset, run.model, run.backend) for run in runs() if run.repeat == 1}
    sampled = {cell for cell in sampled if "{}/{}".format(*cell[:2]) in CONFIG["python_stacks"]}
    assert set(zip(found["dataset"], found["model"], found["backend"])) == sampled
    assert found["reason"].isna().all(), found["reason"].tolist()
    assert (found["samples"] > 0).all()
    shares = found[[layer + "_share" for layer in python_stacks.LAYERS]].sum(axis=1)
    assert np.allclose(shares, 1.0)
    native = found["backend"].str.startswith("native-")
    assert (found.loc[native, "keras_share"] == 0).all()
    assert (found["sampled_over_timed"] > 0).all()
    for run in runs():
        if run.repeat == 1 and (run.dataset, run.model, run.backend) in sampled:
            folder = paths.python_stacks_dir(run)
            point = ", ".join("{}={}".format(d, getattr(run, d)) for d in matrix.DIMENSION_NAMES)
            title = "{} / {} on {} ({}): the clocked steady state".format(
                run.dataset, run.model, run.backend, point
            )  # as workflow/scripts/python_stacks.py titles it
            stacks = python_stacks.read_stacks(str(workdir / folder / "stacks.txt"))
            figure = workflow_drew(
                workdir, folder + "/flame.png", python_stacks.flame_graph_figure(stacks, title)
            )
            (axis,) = figure.axes
            samples = int(re.search(r"\((\d+) samples\)", axis.get_xlabel()).group(1))
            cell = found[
                (found["dataset"] == run.dataset)
                & (found["model"] == run.model)
                & (found["backend"] == run.backend)
            ]
            assert samples in set(cell["samples"]) and axis.patches, run  # its frames drawn
    metrics = pd.read_csv(workdir / "results/metrics.csv")
    gru = metrics[(metrics["model"] == "imdb_gru") & (metrics["machine"] == runs()[0].machine)]
    assert (gru.groupby("backend").size() == entry("imdb_gru")["repeats"]).all()  # timed only
    assert (workdir / "results/tables/python_stacks_gaps.md").exists()
    layers = results_table(workdir, "tables/python_stacks.csv")
    for dataset, model in {cell[:2] for cell in sampled}:
        figure = workflow_drew(
            workdir,
            "results/plots/{}_{}_python_stacks.png".format(dataset, model),
            python_stacks.figure_of(layers, dataset, model),
        )
        cells = found[(found["dataset"] == dataset) & (found["model"] == model)]
        cells = cells[cells["ms_per_step"].notna()]
        layer_names = [python_stacks.LAYER_NAMES[layer] for layer in python_stacks.LAYERS]
        shows_stacked_bars(figure, cells, layer_names, (dataset, model))  # split by layer


def test_report(workdir, tmp_path):
    """snakemake --report on the results, timed by benchmarks/report_time.py,
    then the report in headless Chromium: every category and result opened
    as a reader would, every image loaded, every table with rows (the
    script's problems)."""
    report = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "benchmarks/report_time.py", "--configfile", TEST_CONFIG]
        + ["--repeats", "1", "--report", str(report)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=INVOCATION_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(done.stdout)
    html = report.read_text()
    assert len(html) > 100_000  # plots are embedded
    for name in (
        "digits_mlp_epoch_time.png",
        "babi_tiny_babi_rnn_convergence.png",
        "imagenet_synthetic_resnet50_throughput.png",
        "digits_cnn_scaling.png",
        "summary.csv",
        "abstraction_cost.png",
        "lines_of_code.png",
        "abstraction_cost.csv",
        "relative_speed.png",
        "significance.html",
        "environment.html",
        "utilisation.png",
        "published_comparison.html",
        "speedups.png",
        "digits_mlp.html",
    ):
        assert name in html, name
    # the front page opens with the answer (the heat-map itself, the significant differences,
    # what was not run and why), then the method
    front = json.loads(re.search(r"var workflow_desc = (\".*?\");\n", html, re.S).group(1))
    order = ["<img ", "Significant differences", "Not run, and why", "<h1>Method</h1>"]
    assert [front.index(text) for text in order] == sorted(front.index(text) for text in order)
    assert "system-message" not in front
    checked = re.search(
        r"browser check: .* s; (\d+)/(\d+) results opened, (\d+) images, (\d+) tables, "
        r"(\d+) problems",
        done.stdout,
    )
    opened, results, images, tables, problems = (int(n) for n in checked.groups())
    assert problems == 0 and opened == results, done.stdout
    assert images >= len(list((workdir / "results/plots").glob("*.png")))
    assert tables > 0


def pending_runs(workdir, *args):
    """(model, backend) of every run record Snakemake plans to (re)make."""
    summary = snakemake(workdir, "--summary", *args).stdout
    lines = [line.split("\t") for line in summary.splitlines() if line.startswith("results/runs/")]
    return sorted(
        {
            (path.split("/")[4], path.split("/")[5])
            for path, *rest in lines
            if path.endswith("run.json") and rest[-1] != "no update"
        }
    )


def test_untouched_workflow_has_nothing_to_do(workdir):
    done = snakemake(workdir, "-n")
    assert "Nothing to be done" in done.stdout + done.stderr
    assert pending_runs(workdir) == []


def test_hyper_parameter_edit_plans_exactly_that_models_runs(workdir, tmp_path):
    config = load_test_config()
    (cnn,) = [w for w in config["workloads"] if w["model"] == "cnn"]
    cnn["epochs"] += 1
    edited = write_config(tmp_path / "edited.yaml", config)
    assert pending_runs(workdir, "--configfile", str(edited)) == sorted(
        {("cnn", run.backend) for run in runs("cnn")}
    )


def test_bad_config_is_refused_before_any_job(workdir, tmp_path):
    config = load_test_config()
    config["workloads"][0]["model"] = "transformer"
    bad = write_config(tmp_path / "bad.yaml", config)
    done = snakemake(workdir, "-n", "--configfile", str(bad), check=False)
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
        if line.startswith("Shell command:") and "-m dlbench.run.supervise" in line
    ]
    # the timed runs, the equivalence check's and the python stacks'
    sampled = [run for run in runs() if run.repeat == 1]
    sampled = [run for run in sampled if f"{run.dataset}/{run.model}" in CONFIG["python_stacks"]]
    assert len(bench_commands) == len(runs()) + len(comparisons.check_runs(CONFIG)) + len(sampled)
    assert all(command.startswith("PYTHONPATH=src python -m ") for command in bench_commands)


def test_added_device_counts_rerun_no_cpu_run(workdir, tmp_path):
    """Devices 1 and 2 beside the CPU on the MLP: only the new cells are
    planned, none of the CPU runs already made."""
    config = load_test_config()
    (mlp,) = [w for w in config["workloads"] if w["model"] == "mlp"]
    mlp["devices"] = [0, 1, 2]
    more = write_config(tmp_path / "devices.yaml", config)
    planned = snakemake(workdir, "-n", "--configfile", str(more))
    records = {
        line.split("output:", 1)[1].split(",")[0].strip()
        for line in (planned.stdout + planned.stderr).splitlines()
        if "output: results/runs/" in line
    }
    expected = {
        paths.run_dir(run) + "/run.json"
        for run in matrix.runs(matrix.normalise(config))
        if run.model == "mlp" and run.devices > 0
    }
    assert records == expected and expected
