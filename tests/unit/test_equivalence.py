"""The equivalence check's library side: which runs it makes, the batches
it takes, and how it judges the curves (dlbench.run.equivalence)."""

import json
import math

import numpy as np
import pytest

from dlbench.analysis import equivalence_verdicts
from dlbench.plan import matrix
from dlbench.run import equivalence, harness


def record(backend, losses, model="mlp", status="ok", loaded=True, rule=None):
    return {
        "settings": {"own_rules": [rule]} if rule else {"own_rules": []},
        "machine": "local",
        "dataset": "digits",
        "model": model,
        "backend": backend,
        "status": status,
        "reason": None if status == "ok" else "it crashed",
        "initial_weights": {"loaded": loaded, "reason": "cannot convert Embedding"},
        "check": {"losses": losses},
    }


CURVE = [2.30, 2.10, 1.90, 1.70]


def test_the_same_curve_up_to_rounding_is_the_same_steps():
    rounded = [value * (1 + 2e-6) for value in CURVE]
    table = equivalence_verdicts.compare(
        [record("a", CURVE), record("b", rounded), record("c", CURVE)]
    ).set_index("backend")
    assert set(table["verdict"]) == {equivalence_verdicts.VERDICT_SAME}
    assert table.loc["b", "largest_relative_difference"] == pytest.approx(2e-6, rel=1e-3)
    assert table.loc["a", "initial_loss"] == 2.30 and table.loc["a", "final_loss"] == 1.70
    assert table["first_step_beyond_tolerance"].isna().all()


def test_a_backend_that_departs_is_named_with_its_first_step():
    """The median of three or more curves stays with the majority; the odd
    one out departs at the step where it leaves the tolerance."""
    slow = CURVE[:2] + [1.95, 1.80]  # the same forward pass and first step, then not
    table = equivalence_verdicts.compare(
        [record("a", CURVE), record("b", CURVE), record("c", slow), record("d", CURVE)]
    ).set_index("backend")
    assert table.loc["c", "verdict"] == "DEPARTS at step 2"
    assert table.loc["c", "first_step_beyond_tolerance"] == 2
    assert table.loc["c", "at_step"] == 3
    assert table.loc["c", "largest_relative_difference"] == pytest.approx(0.1 / 1.7)
    assert (table.drop("c")["verdict"] == equivalence_verdicts.VERDICT_SAME).all()
    assert table["reference"].iloc[0] == "median of 4 backends"


def test_a_diverged_step_departs():
    table = equivalence_verdicts.compare(
        [record("a", CURVE), record("b", CURVE), record("c", CURVE[:3] + [math.nan])]
    ).set_index("backend")
    assert table.loc["c", "verdict"] == "DEPARTS at step 3"
    assert table.loc["c", "largest_relative_difference"] == math.inf


def test_curves_without_shared_weights_or_a_run_are_not_compared():
    table = equivalence_verdicts.compare(
        [
            record("a", CURVE),
            record("b", CURVE),
            record("c", CURVE),
            record("own", CURVE, loaded=False),
            record("failed", None, status="failed"),
        ]
    ).set_index("backend")
    assert table.loc["own", "verdict"] == (
        "not compared: own initial weights (cannot convert Embedding)"
    )
    assert table.loc["failed", "verdict"] == "not compared: failed: it crashed"
    assert table.loc["a", "reference"] == "median of 3 backends"


def test_a_median_needs_three_curves_a_named_reference_does_not():
    two = [record("a", CURVE), record("b", [value * 1.01 for value in CURVE])]
    median = equivalence_verdicts.compare(two).set_index("backend")
    assert set(median["verdict"]) == {
        "not compared: no reference (fewer than 3 curves computed as Keras 3 does, for a median)"
    }
    named = equivalence_verdicts.compare(two, reference="a").set_index("backend")
    assert named.loc["a", "verdict"] == equivalence_verdicts.VERDICT_SAME
    assert named.loc["b", "verdict"] == "DEPARTS at step 0"
    loose = equivalence_verdicts.compare(two, reference="a", tolerance=0.02).set_index("backend")
    assert loose.loc["b", "verdict"] == equivalence_verdicts.VERDICT_SAME


def test_a_framework_with_rules_of_its_own_is_expected_to_depart():
    """Its curve is not part of the median; where it departs, the verdict
    says that its rule is the reason; where it does not, it is the same."""
    other = [2.30, 2.00, 1.60, 1.50]
    table = equivalence_verdicts.compare(
        [record(b, CURVE) for b in "abc"]
        + [record("own-1", other, rule="eps after the root"), record("own-2", other, rule="x")]
        + [record("own-3", CURVE, rule="y")]
    ).set_index("backend")
    assert table.loc["own-1", "verdict"] == equivalence_verdicts.EXPECTED_DEPARTURE.format(1)
    assert table.loc["own-1", "own_rules"] == "eps after the root"
    assert table.loc["own-3", "verdict"] == equivalence_verdicts.VERDICT_SAME
    assert table.loc["a", "reference"] == "median of 3 backends"


def test_workloads_are_judged_apart():
    records = [record(b, CURVE) for b in "abc"]
    records += [record(b, [1.0, 0.5], model="cnn") for b in "abc"]
    table = equivalence_verdicts.compare(records)
    assert sorted(set(table["model"])) == ["cnn", "mlp"]
    assert set(table["verdict"]) == {equivalence_verdicts.VERDICT_SAME}


def test_the_check_takes_the_first_batches_of_the_shared_order_across_epochs():
    """digits has fewer training samples than 20 batches of 128: the check
    goes on into the next epoch's order, as a timed run would."""
    batches = equivalence.first_batches(42, 100, 250)
    assert len(batches) == 250
    np.testing.assert_array_equal(batches[:100], harness.epoch_order(42, 0, 100))
    np.testing.assert_array_equal(batches[100:200], harness.epoch_order(42, 1, 100))
    np.testing.assert_array_equal(batches[200:], harness.epoch_order(42, 2, 100)[:50])


def test_check_runs_are_the_training_workloads_on_every_backend_on_the_cpu(smoke_config):
    runs = matrix.check_runs(smoke_config)
    chosen = smoke_config["equivalence_check"]["workloads"]
    assert {"{}/{}".format(run.dataset, run.model) for run in runs} == set(chosen)
    assert {(run.devices, run.threads, run.repeat) for run in runs} == {(0, 1, 1)}
    for name in chosen:
        dataset, model = name.split("/")
        entry = matrix.workload(smoke_config, dataset, model)
        backends = [run.backend for run in runs if (run.dataset, run.model) == (dataset, model)]
        assert backends == matrix.runnable_backends(smoke_config, entry, {"devices": 0})
        assert "keras-torch" in backends and "native-cntk" in backends
    spec = matrix.check_spec(smoke_config, runs[0])
    assert spec["task"] == "check" and spec["check_steps"] == 4
    assert spec["initial_weights"].startswith("results/weights/")
    assert matrix.check_dir(runs[0]).startswith("results/checks/")

    del smoke_config["equivalence_check"]["workloads"]
    trained = {
        (entry["dataset"], entry["model"])
        for entry in smoke_config["workloads"]
        if entry.get("task", "train") == "train"
    }
    assert {(run.dataset, run.model) for run in matrix.check_runs(smoke_config)} == trained
    assert not matrix.check_runs(dict(smoke_config, initial_weights="own"))
    assert not matrix.check_runs(dict(smoke_config, equivalence_check={"steps": 0}))


def test_check_settings_are_checked_against_the_config(smoke_config):
    smoke_config["equivalence_check"]["reference"] = "keras-cntk"
    with pytest.raises(matrix.ConfigError, match="reference: 'keras-cntk' is neither median"):
        matrix.check(smoke_config)
    smoke_config["equivalence_check"].update(reference="keras-jax", workloads=["digits/vgg"])
    with pytest.raises(matrix.ConfigError, match=r"workloads\[0\]: 'digits/vgg' names no"):
        matrix.check(smoke_config)
    smoke_config["equivalence_check"]["workloads"] = ["digits/cnn", "cifar10/vgg_cifar"]
    matrix.check(smoke_config)  # a workload not configured is not checked


def test_a_check_run_records_its_curve_from_the_shared_weights(tmp_path, numpy_backend, digits_npz):
    """Through the harness, as the workflow runs it: the same weights and
    batches give the same curve; another learning rate departs at step 1,
    after the same forward pass."""
    from test_initial_weights import manifest_of

    from dlbench.models import initial_weights
    from dlbench.record import record_schema
    from test_harness import spec_for

    features, classes = 28 * 28, 10
    weights = tmp_path / "seed7.npz"
    rng = np.random.RandomState(0)
    initial_weights.write(
        str(weights),
        manifest_of(
            [
                ("dense", "Dense", "kernel", [features, classes]),
                ("dense", "Dense", "bias", [classes]),
            ]
        ),
        [
            rng.uniform(-0.05, 0.05, (features, classes)).astype("float32"),
            np.zeros(classes, "float32"),
        ],
    )
    records = []
    for name, learning_rate in (("a", 0.5), ("b", 0.5), ("c", 0.5), ("wrong", 0.05)):
        spec = dict(spec_for(numpy_backend), task="check", check_steps=12)
        spec.update(initial_weights=str(weights), seed=42)
        spec["hyper"]["optimizer"]["learning_rate"] = learning_rate
        path = tmp_path / "{}.json".format(name)
        harness.run(spec, str(digits_npz), str(path), str(tmp_path / "{}.csv".format(name)))
        found = json.loads(path.read_text())
        assert record_schema.problems(found) == []
        assert found["status"] == "ok", found.get("error")
        assert found["initial_weights"]["loaded"] is True
        assert len(found["check"]["losses"]) == 13 and found["check"]["dropout"] is False
        records.append(dict(found, backend=name))
    steps = np.genfromtxt(tmp_path / "a.csv", delimiter=",", names=True)
    np.testing.assert_allclose(steps["loss"], records[0]["check"]["losses"])
    assert records[0]["check"]["losses"][-1] < records[0]["check"]["losses"][0]  # it learns

    table = equivalence_verdicts.compare(records).set_index("backend")
    assert (table.loc[["a", "b", "c"], "largest_relative_difference"] == 0).all()
    assert table.loc["wrong", "verdict"] == "DEPARTS at step 1"
    assert table.loc["wrong", "initial_loss"] == table.loc["a", "initial_loss"]


def test_no_check_records_give_an_empty_table():
    table = equivalence_verdicts.compare([])
    assert table.empty and list(table.columns) == list(equivalence_verdicts.TABLE_COLUMNS)


def test_a_check_record_that_breaks_the_schema_is_shown_invalid(tmp_path):
    from dlbench.analysis import collect

    run = matrix.Run("digits", "mlp", "keras-jax", devices=0, threads=1, repeat=1)
    path = tmp_path / matrix.check_dir(run) / "check.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"task": "check", "status": "ok"}))
    (found,) = collect.load_records([str(path)])
    assert found["status"] == "invalid" and found["backend"] == "keras-jax"
    (row,) = equivalence_verdicts.compare([found]).itertuples()
    assert row.verdict.startswith("not compared: invalid: invalid run record")
