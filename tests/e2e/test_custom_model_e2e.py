"""A Keras model of your own, from a file outside the workflow, through the
workflow: on Keras 3 (keras-torch) and Keras 2 (keras2-theano), n/a on
native torch, its parameters from the built model and its FLOPs counted. The
example Transformer on Keras 2, which has no MultiHeadAttention, fails there
with the reason and takes nothing else down. The same model on a synthetic
dataset of a shape the config gives: speed only, no accuracy parity. A model
whose output does not fit the dataset fails its check once, before any run,
and its cells are invalid with the reason."""

import json
import textwrap

import pandas as pd
import pytest
import yaml

from testkit import REPO, copy_workflow, run_json, run_snakemake, write_config
from workflows import load_test_config

BACKENDS = ["keras-torch", "keras2-theano", "native-torch"]
MODEL = textwrap.dedent(
    """
    def make(keras, spec):
        layers = keras.layers
        return keras.Sequential(
            [
                keras.Input(shape=tuple(spec["input_shape"])),
                layers.Flatten(),
                layers.Dense(8, activation="relu"),
                layers.Dense(spec["classes"], activation="softmax"),
            ]
        )
    """
)
# three outputs for ten classes: its check fails, so its runs never start
BROKEN = MODEL.replace('spec["classes"]', "3")
# 784 -> 8 -> 10, by hand: weights and biases; multiply-adds forward, and
# backward the weight gradients of both and the input gradient of the second
PARAMETERS = 784 * 8 + 8 + 8 * 10 + 10
FORWARD = 784 * 8 + 8 * 10
FLOPS = {"forward": 2 * FORWARD, "training": 2 * (FORWARD + FORWARD + 8 * 10)}
# one thread a run: two-thread runs beside the session's others wait on each other
THREADS = 1
OWN_RUNS = [run_json("digits", "own_dense", b, threads=THREADS) for b in BACKENDS[:2]]
# the example on Keras 2 only: the built workflow trains it on Keras 3 (keras-tensorflow)
EXAMPLE_RUN = run_json("imdb_tiny", "imdb_transformer", "keras2-theano", threads=THREADS)
SYNTHETIC = {"input_shape": [12, 10, 3], "classes": 4, "train": 256, "test": 64}
SYNTHETIC_RUN = run_json("pixels", "own_dense", "keras-torch", threads=THREADS)
BROKEN_RUN = run_json("digits", "own_broken", "keras-torch", threads=THREADS)
TARGETS = OWN_RUNS + [EXAMPLE_RUN, SYNTHETIC_RUN, BROKEN_RUN]
TARGETS += ["results/summary.csv", "results/tables/utilisation.csv"]
TARGETS += ["results/tables/lines_of_code.csv"]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, built_workflow):
    outside = tmp_path_factory.mktemp("models") / "own_dense.py"
    outside.write_text(MODEL)
    broken = outside.with_name("own_broken.py")
    broken.write_text(BROKEN)
    for environment in BACKENDS[:2]:
        built_workflow.venv(environment)
    workdir = copy_workflow(
        tmp_path_factory.mktemp("custom") / "workflow", built_workflow.path, BACKENDS[:2]
    )
    smoke = yaml.safe_load((REPO / "config" / "smoke-full.yaml").read_text())
    (mlp,) = [entry for entry in smoke["workloads"] if entry["model"] == "mlp"]
    (example,) = [entry for entry in smoke["workloads"] if entry["model"] == "imdb_transformer"]
    config = dict(
        smoke,
        threads=THREADS,
        # the built workflow draws shared weights for the example model: here
        # each draw would be one more process importing Keras and torch
        initial_weights="own",
        # the machine's probe sized as in the tests' config: the tables need a rate
        probe_largest_size=load_test_config()["probe_largest_size"],
        # the tests' config's settings: Theano finds the ops the built workflow compiled
        backends={backend: load_test_config()["backends"][backend] for backend in BACKENDS},
        custom_models=dict(
            smoke["custom_models"],
            own_dense={"file": str(outside), "builder": "make"},
            own_broken={"file": str(broken), "builder": "make"},
        ),
        synthetic_datasets={"pixels": SYNTHETIC},
        workloads=[
            dict(mlp, model="own_dense", epochs=2, repeats=1),
            dict(example, epochs=2, backends=["keras2-theano"]),
            dict(mlp, dataset="pixels", model="own_dense", epochs=2, repeats=1, backends=BACKENDS),
            dict(mlp, model="own_broken", epochs=2, repeats=1, backends=BACKENDS[:1]),
        ],
    )
    write_config(workdir / "config" / "custom.yaml", config)
    run_snakemake(workdir, "--configfile", "config/custom.yaml", "-j2", *TARGETS)
    return workdir


def record(workdir, path):
    return json.loads((workdir / path).read_text())


def test_it_runs_on_keras_3_and_keras_2_with_the_built_models_parameters(workdir):
    for path in OWN_RUNS:
        ran = record(workdir, path)
        assert ran["status"] == "ok", (path, ran.get("error"))
        assert ran["parameters"] == PARAMETERS
        assert ran["custom_model"]["builder"] == "make"
        assert ran["test_accuracy"] > 0.3  # 2 epochs of a tiny net: learning, not parity
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["dataset", "backend"])
    assert summary.loc[("digits", "native-torch"), "status"] == "not_applicable"


def test_its_flops_are_counted_and_used(workdir):
    counted = json.loads((workdir / "results/flops/digits/own_dense.json").read_text())
    assert {k: counted[k] for k in FLOPS} == FLOPS and counted["parameters"] == PARAMETERS
    used = pd.read_csv(workdir / "results/tables/utilisation.csv")
    used = used[(used["model"] == "own_dense") & (used["dataset"] == "digits")]
    assert sorted(used["backend"]) == BACKENDS[:2]
    assert (used["forward_gflops_per_sample"] == FLOPS["forward"] / 1e9).all()
    lines = pd.read_csv(workdir / "results/tables/lines_of_code.csv")
    own = lines[(lines["model"] == "own_dense") & (lines["dataset"] == "digits")]
    assert sorted(own["backend"]) == BACKENDS[:2]


def test_where_it_does_not_build_the_run_fails_with_the_reason(workdir):
    keras2 = record(workdir, EXAMPLE_RUN)
    assert keras2["status"] == "failed" and "MultiHeadAttention" in keras2["reason"]
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["model", "backend"])
    assert summary.loc[("imdb_transformer", "keras2-theano"), "status"] == "failed"


def test_on_a_synthetic_shape_it_is_timed_and_not_judged_on_accuracy(workdir):
    ran = record(workdir, SYNTHETIC_RUN)
    assert ran["status"] == "ok", ran.get("error")
    assert ran["parameters"] == 12 * 10 * 3 * 8 + 8 + 8 * 4 + 4
    assert ran["train_samples"] == 256 and ran["steady_epoch_seconds"] > 0
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["dataset", "backend"])
    for backend in BACKENDS[:2]:  # two backends ran: parity would be judged on real labels
        assert summary.loc[("pixels", backend), "status"] == "ok"
        assert pd.isna(summary.loc[("pixels", backend), "accuracy_parity"])
    assert summary.loc[("pixels", "native-torch"), "status"] == "not_applicable"
    counted = json.loads((workdir / "results/flops/pixels/own_dense.json").read_text())
    assert counted["forward"] == 2 * (12 * 10 * 3 * 8 + 8 * 4)


def test_a_model_that_fails_its_check_makes_its_cells_invalid_and_never_runs(workdir):
    checked = record(workdir, "results/models/digits/own_broken.json")
    assert checked["ok"] is False
    assert checked["output_shape"] == [2, 3]
    ran = record(workdir, BROKEN_RUN)
    assert ran["status"] == "invalid"
    assert ran["reason"].startswith("the model of your own failed its check: ")
    assert "the dataset has 10 classes: end it in 10 outputs" in ran["reason"]
    log = (workdir / BROKEN_RUN).with_name("bench.log").read_text()
    assert log.startswith("run not started") and "Traceback" not in log
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["model", "backend"])
    assert summary.loc[("own_broken", "keras-torch"), "status"] == "invalid"
    counted = record(workdir, "results/flops/digits/own_broken.json")  # not built to count
    assert counted["forward"] is None and counted["error"] == ran["reason"]
    assert record(workdir, "results/models/digits/own_dense.json")["ok"] is True
