"""Inference from the same weights: the weights an inference run loads,
the predictions its record keeps, and their comparison across runs
(dlbench.analysis.equivalence_predictions.compare_predictions), through the harness and a
real numpy model."""

import copy
import json

import numpy as np
import pandas as pd
import pytest
from test_initial_weights import layout_of

from dlbench.analysis import collect, equivalence_predictions, tables
from dlbench.plan import comparisons, config_rules, matrix, run_spec
from dlbench.record import record_schema
from dlbench.run import harness, run_data, shared_weights
from test_harness import infer_spec

FEATURES, CLASSES = 28 * 28, 10


def write_weights(path, kernel, bias, trained=None):
    layout = layout_of(
        [("dense", "Dense", "kernel", [FEATURES, CLASSES]), ("dense", "Dense", "bias", [CLASSES])]
    )
    if trained:
        layout["trained"] = trained
    shared_weights.write(str(path), layout, [kernel, bias])
    return str(path)


@pytest.fixture
def weights(tmp_path):
    rng = np.random.RandomState(3)
    kernel = rng.uniform(-0.05, 0.05, (FEATURES, CLASSES)).astype("float32")
    bias = rng.uniform(-0.5, 0.5, CLASSES).astype("float32")
    trained = {"backend": "keras-torch", "hyper": {"epochs": 2}, "test_accuracy": 0.91}
    return kernel, bias, write_weights(tmp_path / "trained_seed7.npz", kernel, bias, trained)


def infer(tmp_path, name, backend, digits_npz, weights_file, registry):
    spec = infer_spec(backend)._replace(initial_weights=weights_file)
    path = tmp_path / "{}.json".format(name)
    harness.run(
        spec,
        str(digits_npz),
        str(path),
        str(tmp_path / "{}.csv".format(name)),
        registry=registry,
    )
    return dict(json.loads(path.read_text()), backend=name)


def test_an_inference_run_loads_the_weights_and_keeps_its_predictions(
    tmp_path, numpy_backend, numpy_registry, digits_npz, weights
):
    kernel, bias, path = weights
    record = infer(tmp_path, "a", numpy_backend, digits_npz, path, numpy_registry)
    assert record["status"] == "ok", record["error"]
    assert record_schema.problems(record) == []
    assert record["initial_weights"]["loaded"] is True
    assert record["initial_weights"]["trained"]["test_accuracy"] == 0.91
    found = record["predictions"]
    assert (found["samples"], found["columns"]) == (32, CLASSES)  # the timed batch's shape
    data = run_data.load_dataset(str(digits_npz))
    x = data["x_test"][:32].reshape(32, -1).astype("float64")
    logits = x @ kernel.astype("float64") + bias
    expected = np.exp(logits - logits.max(axis=1, keepdims=True))
    expected /= expected.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(found["outputs"], expected, rtol=1e-10)
    np.testing.assert_allclose(found["norms"], np.linalg.norm(expected, axis=1), rtol=1e-10)
    assert found["classes"] == list(expected.argmax(axis=1))
    assert len(found["classes_sha256"]) == 64
    assert collect._initial_weights(record) == "shared, trained (2 epochs on keras-torch)"


def test_the_same_weights_predict_the_same_and_a_changed_bias_departs(
    tmp_path, numpy_backend, numpy_registry, digits_npz, weights
):
    """Three runs from the same file agree exactly; one whose bias differs
    (a layer built without its bias, as it were) departs; one whose loader
    fails is not compared and says why; one that failed says so."""
    kernel, bias, path = weights
    records = [
        infer(tmp_path, name, numpy_backend, digits_npz, path, numpy_registry) for name in "abc"
    ]
    wrong = write_weights(tmp_path / "wrong.npz", kernel, np.zeros_like(bias))
    records.append(infer(tmp_path, "no-bias", numpy_backend, digits_npz, wrong, numpy_registry))
    odd = write_weights(tmp_path / "odd.npz", kernel[:10], bias)  # shapes the loader refuses
    records.append(infer(tmp_path, "own", numpy_backend, digits_npz, odd, numpy_registry))
    failed = dict(copy.deepcopy(records[0]), backend="failed", status="failed", reason="boom")
    records.append(failed)

    table = equivalence_predictions.compare_predictions(records).set_index("backend")
    for name in "abc":
        assert table.loc[name, "verdict"] == equivalence_predictions.VERDICT_SAME_PREDICTIONS
        assert table.loc[name, "largest_difference"] == 0
        assert table.loc[name, "classes_differing"] == 0
    assert table.loc["a", "reference"] == "median of 4 runs"
    assert table.loc["no-bias", "verdict"].startswith("DEPARTS")
    assert table.loc["no-bias", "largest_difference"] > 1e-2
    assert table.loc["no-bias", "classes_differing"] > 0
    assert table.loc["own", "verdict"].startswith("not compared: own weights (could not load")
    assert table.loc["failed", "verdict"] == "not compared: failed: boom"
    assert table.loc["a", "weights"] == "trained (keras-torch, test accuracy 0.910)"
    assert table.loc["no-bias", "weights"] == "shared draw"

    named = equivalence_predictions.compare_predictions(records, reference="no-bias").set_index(
        "backend"
    )
    assert named.loc["no-bias", "verdict"] == equivalence_predictions.VERDICT_SAME_PREDICTIONS
    assert named.loc["a", "verdict"].startswith("DEPARTS")


def record_with(backend, outputs, norms=None, machine="m1", devices=0, classes=True):
    outputs = np.asarray(outputs, float)
    found = {
        "samples": len(outputs),
        "columns": outputs.shape[1],
        "outputs": outputs.tolist(),
        "norms": list(np.linalg.norm(outputs, axis=1) if norms is None else norms),
    }
    if classes:
        found["classes"] = [int(c) for c in outputs.argmax(axis=1)]
    return {
        "task": "infer",
        "status": "ok",
        "dataset": "d",
        "model": "m",
        "repeat": 1,
        "backend": backend,
        "machine": machine,
        "devices": devices,
        "threads": "all",
        "precision": "float32",
        "compile": "auto",
        "initial_weights": {"loaded": True, "file": "w.npz", "sha256": "0" * 64},
        "predictions": found,
    }


def test_features_are_compared_scale_free_and_across_machines_and_devices():
    """A feature extractor's outputs (no classes): the difference is over
    the largest reference output, so large features and small ones are held
    to the same tolerance; runs on other machines and device counts are
    compared with the same reference; fewer than three runs give none."""
    base = np.random.RandomState(0).normal(0, 300.0, (4, 8))
    records = [
        record_with("x", base, classes=False),
        record_with("y", base * (1 + 1e-7), machine="m2", classes=False),
        record_with("z", base, devices=1, classes=False),
        record_with("off", base + 0.5, classes=False),
    ]
    table = equivalence_predictions.compare_predictions(records)
    assert len(table) == 4 and set(table["machine"]) == {"m1", "m2"}
    verdicts = table.set_index("backend")["verdict"]
    assert (verdicts[["x", "y", "z"]] == equivalence_predictions.VERDICT_SAME_PREDICTIONS).all()
    assert verdicts["off"].startswith("DEPARTS")  # 0.5 of about 900: above 1e-4
    assert table["classes_differing"].isna().all()

    two = equivalence_predictions.compare_predictions(records[:2])
    assert two["verdict"].str.startswith("not compared: no reference (fewer than 3").all()
    assert equivalence_predictions.compare_predictions([]).empty


def test_the_norm_of_every_output_counts_beyond_the_kept_columns():
    outputs = np.eye(3)
    records = [record_with(name, outputs, classes=False) for name in "abc"]
    records.append(record_with("d", outputs, norms=[1.0, 1.0, 1.5], classes=False))
    verdicts = equivalence_predictions.compare_predictions(records).set_index("backend")["verdict"]
    assert verdicts["d"].startswith("DEPARTS") and verdicts["a"] == "same predictions"


def test_workload_table_gains_a_same_predictions_column():
    checks = pd.DataFrame(
        [
            {"dataset": "d", "model": "m", "backend": "a", "verdict": "same predictions"},
            {"dataset": "d", "model": "m", "backend": "b", "verdict": "same predictions"},
            {"dataset": "d", "model": "m", "backend": "b", "verdict": "DEPARTS (x)"},
        ]
    ).assign(classes_differing=0)
    found = tables._verdict_per_backend(checks)
    assert found.to_dict() == {"a": "same predictions", "b": "DEPARTS (x)"}
    # where a backend's rows differ in a setting, the departing one is named
    precisions = checks.assign(precision=["float32", "float32", "mixed_bfloat16"])
    found = tables._verdict_per_backend(precisions)
    assert found.to_dict() == {"a": "same predictions", "b": "mixed_bfloat16: DEPARTS (x)"}


def test_inference_runs_load_the_trained_weights_where_the_workload_trains_them(smoke_config):
    config_rules.validate(smoke_config)
    entry = matrix.workload(smoke_config, "digits", "lenet")
    run = matrix.Run("digits", "lenet", "keras-jax", repeat=2)
    assert run_spec.initial_weights_entry(smoke_config, entry, run) == {
        "initial_weights": "results/weights/digits/lenet/trained_seed43.npz"
    }
    assert "trained_weights" not in run_spec.spec(smoke_config, run).hyper
    resnet = matrix.workload(smoke_config, "imagenet_synthetic", "resnet50")
    run = matrix.Run("imagenet_synthetic", "resnet50", "keras-jax", repeat=2)
    found = run_spec.initial_weights_entry(smoke_config, resnet, run)
    assert found == {"initial_weights": "results/weights/imagenet_synthetic/resnet50/seed43.npz"}
    own = dict(smoke_config, initial_weights="own")
    assert run_spec.initial_weights_entry(own, resnet, run) == {}
    assert comparisons.predictions_compared(smoke_config)
    assert not comparisons.predictions_compared(dict(smoke_config, initial_weights="own"))


def test_trained_weights_are_refused_where_they_mean_nothing(smoke_config):
    training = matrix.workload(smoke_config, "digits", "lenet")["trained_weights"]
    matrix.workload(smoke_config, "digits", "mlp")["trained_weights"] = training
    with pytest.raises(matrix.ConfigError, match=r"workloads\[0\].trained_weights: only an inf"):
        config_rules.validate(smoke_config)
    del matrix.workload(smoke_config, "digits", "mlp")["trained_weights"]
    matrix.workload(smoke_config, "imagenet_synthetic", "resnet50")["trained_weights"] = training
    with pytest.raises(matrix.ConfigError, match="nothing to learn .resnet50 ends in features"):
        config_rules.validate(smoke_config)
