"""The equivalence check's library side: which runs it makes, the batches
it takes, and how it judges the curves (dlbench.run.equivalence)."""

import json
import math

import numpy as np
import pytest

from dlbench.analysis import equivalence_dropout, equivalence_steps
from dlbench.plan import comparisons, config_rules, matrix, paths, run_spec
from dlbench.run import equivalence, harness, run_data


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
    table = equivalence_steps.compare(
        [record("a", CURVE), record("b", rounded), record("c", CURVE)]
    ).set_index("backend")
    assert set(table["verdict"]) == {equivalence_steps.VERDICT_SAME}
    assert table.loc["b", "largest_relative_difference"] == pytest.approx(2e-6, rel=1e-3)
    assert table.loc["a", "initial_loss"] == 2.30 and table.loc["a", "final_loss"] == 1.70
    assert table["first_step_beyond_tolerance"].isna().all()


def test_a_backend_that_departs_is_named_with_its_first_step():
    """The median of three or more curves stays with the majority; the odd
    one out departs at the step where it leaves the tolerance."""
    slow = CURVE[:2] + [1.95, 1.80]  # the same forward pass and first step, then not
    table = equivalence_steps.compare(
        [record("a", CURVE), record("b", CURVE), record("c", slow), record("d", CURVE)]
    ).set_index("backend")
    assert table.loc["c", "verdict"] == "DEPARTS at step 2"
    assert table.loc["c", "first_step_beyond_tolerance"] == 2
    assert table.loc["c", "at_step"] == 3
    assert table.loc["c", "largest_relative_difference"] == pytest.approx(0.1 / 1.7)
    assert (table.drop("c")["verdict"] == equivalence_steps.VERDICT_SAME).all()
    assert table["reference"].iloc[0] == "median of 4 backends"


def test_a_diverged_step_departs():
    table = equivalence_steps.compare(
        [record("a", CURVE), record("b", CURVE), record("c", CURVE[:3] + [math.nan])]
    ).set_index("backend")
    assert table.loc["c", "verdict"] == "DEPARTS at step 3"
    assert table.loc["c", "largest_relative_difference"] == math.inf


def test_curves_without_shared_weights_or_a_run_are_not_compared():
    table = equivalence_steps.compare(
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
    median = equivalence_steps.compare(two).set_index("backend")
    assert set(median["verdict"]) == {
        "not compared: no reference (fewer than 3 curves, for a median)"
    }
    named = equivalence_steps.compare(two, reference="a").set_index("backend")
    assert named.loc["a", "verdict"] == equivalence_steps.VERDICT_SAME
    assert named.loc["b", "verdict"] == "DEPARTS at step 0"
    loose = equivalence_steps.compare(two, reference="a", tolerance=0.02).set_index("backend")
    assert loose.loc["b", "verdict"] == equivalence_steps.VERDICT_SAME


def test_a_framework_with_rules_of_its_own_is_held_to_the_reference_like_any():
    """The check runs under settings where the frameworks' own rules
    vanish: a backend whose timed runs have rules of their own is part of
    the median, and where it departs it DEPARTS; its own_rules stay in the
    table as information."""
    other = [2.30, 2.00, 1.60, 1.50]
    table = equivalence_steps.compare(
        [record(b, CURVE) for b in "abc"]
        + [record("own-1", other, rule="eps after the root"), record("own-2", CURVE, rule="y")]
    ).set_index("backend")
    assert table.loc["own-1", "verdict"] == "DEPARTS at step 1"
    assert table.loc["own-1", "own_rules"] == "eps after the root"
    assert table.loc["own-2", "verdict"] == equivalence_steps.VERDICT_SAME
    assert table.loc["a", "reference"] == "median of 5 backends"


def test_the_check_runs_rmsprop_at_its_epsilon_and_nothing_else():
    """RMSprop's epsilon, which frameworks add under or after the square
    root, is the check's tiny one everywhere, and the record says so; Adam
    and Adadelta keep the workload's (dlbench.run.equivalence says why)."""
    hyper = {"batch_size": 8, "optimizer": {"name": "rmsprop", "epsilon": 1e-7, "rho": 0.9}}
    ran, changed = equivalence.check_hyper(hyper)
    assert ran["optimizer"] == dict(hyper["optimizer"], epsilon=equivalence.CHECK_EPSILON)
    assert changed == {"optimizer_epsilon": {"asked": 1e-7, "ran": equivalence.CHECK_EPSILON}}
    assert hyper["optimizer"]["epsilon"] == 1e-7  # the spec's own left as it was
    for name in ("adam", "adadelta"):
        kept = {"batch_size": 8, "optimizer": {"name": name, "epsilon": 1e-7}}
        assert equivalence.check_hyper(kept) == (kept, {})


def test_the_jitter_is_one_draw_for_every_backend_and_leaves_word_ids():
    images = np.zeros((4, 6, 6, 1), "float32")
    words = np.arange(12).reshape(3, 4)
    once, again = equivalence.jittered(images, 42), equivalence.jittered(images, 42)
    np.testing.assert_array_equal(once, again)
    assert once.dtype == np.float32
    assert 0 < np.abs(once).max() <= equivalence.INPUT_JITTER
    assert len(np.unique(once)) == once.size  # no two pixels tied any more
    assert equivalence.jittered(words, 42) is words
    named = equivalence.jittered({"story": words, "image": images}, 42)
    assert named["story"] is words and np.abs(named["image"]).max() > 0


# The dropout check's test on simulated draws: a network of numpy (inputs,
# a ReLU layer, dropout, a softmax layer) drawn like a backend's training-mode
# passes, its statistics from the check's own draw_statistics.
RNG = np.random.RandomState(7)
X, W1, W2 = RNG.normal(size=(32, 64)), RNG.normal(size=(64, 48)) / 8, RNG.normal(size=(48, 10)) / 7


def simulated_draws(seed, rate=0.2, inverted=True, draws=equivalence.DROPOUT_DRAWS):
    """The check's record of a backend whose dropout has ``rate`` (0: none)."""
    rng = np.random.RandomState(seed)
    hidden = np.maximum(X @ W1, 0)

    def softmax(z):
        z = np.exp(z - z.max(axis=-1, keepdims=True))
        return z / z.sum(axis=-1, keepdims=True)

    kept = rng.uniform(size=(draws,) + hidden.shape) >= rate
    scaled = hidden * kept / ((1.0 - rate) if inverted else 1.0)
    found = equivalence.draw_statistics(softmax(scaled @ W2), softmax(hidden @ W2))
    return dict(found, draws=draws, samples=len(X))


def dropout_record(backend, drawn, model="mlp"):
    return dict(
        record(backend, CURVE, model=model), check={"losses": CURVE, "dropout_draws": drawn}
    )


def dropout_table(draws, alpha=equivalence_dropout.DROPOUT_ALPHA):
    records = [dropout_record(name, drawn) for name, drawn in draws.items()]
    return equivalence_steps.compare(records, alpha=alpha).set_index("backend")


def test_the_dropout_test_s_false_alarm_rate_is_within_its_level():
    """Five backends with the same dropout, 120 times over, at a level of
    0.05 per backend (a thousand times the check's, to see alarms at all):
    the share of backends flagged stays below it (Bonferroni's bound is
    conservative)."""
    alarms, trials, backends = 0, 120, 5
    for trial in range(trials):
        draws = {"b{}".format(b): simulated_draws(trial * 10 + b) for b in range(backends)}
        table = dropout_table(draws, alpha=0.05)
        alarms += int(table["verdict"].str.startswith("DEPARTS").sum())
        assert (
            table["dropout_verdict"].str.startswith("same dropout")
            | (table["verdict"].str.startswith("DEPARTS"))
        ).all()
    rate = alarms / (trials * backends)
    print("false alarms at level 0.05: {} of {} ({:.3f})".format(alarms, trials * backends, rate))
    assert rate <= 0.05


@pytest.mark.parametrize(
    "slip, why",
    [
        ({"rate": 0.3}, "differs from 5 of 5 backends"),
        ({"rate": 0.15}, "differs from 5 of 5 backends"),
        ({"inverted": False}, "differs from 5 of 5 backends"),
        ({"rate": 0.0}, "the same outputs at every draw, where 5 of 5 backends draw afresh"),
    ],
    ids=["a higher rate", "a lower rate", "not inverted", "no dropout"],
)
def test_the_dropout_test_flags_a_backend_whose_dropout_differs(slip, why):
    """At the check's level, among five backends with dropout at 0.2 one
    with another rate, dropout that does not scale what it keeps or none at
    all departs, in every one of ten draws of the backends; the others stay
    the same."""
    for trial in range(10):
        draws = {"b{}".format(b): simulated_draws(trial * 10 + b) for b in range(5)}
        draws["slipped"] = simulated_draws(trial * 10 + 9, **slip)
        table = dropout_table(draws)
        verdict = equivalence_steps.DEPARTS_IN_DROPOUT.format(why)
        assert table.loc["slipped", "verdict"] == verdict, table
        assert (table.drop(index="slipped")["verdict"] == equivalence_steps.VERDICT_SAME).all()


def test_a_pass_whose_first_draws_agree_draws_no_more(numpy_backend, digits_npz, numpy_registry):
    """A model without dropout (the numpy backend's, its rate at 0): the
    check stops after its first draws, its pass found deterministic."""
    from dlbench.run import backends
    from test_harness import spec_for

    spec = spec_for(numpy_backend)._replace(task="check", check_steps=1)
    adapter = backends.adapter_for(numpy_backend, {}, registry=numpy_registry)
    adapter.setup(threads=1, seed=0, devices=0)
    adapter.dropout_rate = 0.0
    data = run_data.load_dataset(str(digits_npz))
    found = equivalence.dropout_draws(spec, adapter, data, lambda *args: None)
    assert found["stochastic"] is False and found["draws"] == equivalence.FIRST_DRAWS
    assert found["spread"] == 0.0 and len(found["squared"]) == equivalence.FIRST_DRAWS


def test_a_model_without_dropout_is_not_a_departure():
    """No backend's draws differ from each other: no dropout to compare."""
    draws = {name: simulated_draws(seed, rate=0.0) for seed, name in enumerate("abc")}
    table = dropout_table(draws)
    assert set(table["dropout_verdict"]) == {equivalence_dropout.NO_DROPOUT}
    assert set(table["verdict"]) == {equivalence_steps.VERDICT_SAME}


def test_a_backend_without_draws_says_why():
    draws = {name: simulated_draws(seed) for seed, name in enumerate("abc")}
    records = [dropout_record(name, drawn) for name, drawn in draws.items()]
    records.append(dropout_record("openvino", {"draws": 200, "samples": 32, "reason": "n/a: x"}))
    table = equivalence_steps.compare(records).set_index("backend")
    assert table.loc["openvino", "dropout_verdict"] == "not compared: n/a: x"
    assert table.loc["openvino", "verdict"] == equivalence_steps.VERDICT_SAME


def test_workloads_are_judged_apart():
    records = [record(b, CURVE) for b in "abc"]
    records += [record(b, [1.0, 0.5], model="cnn") for b in "abc"]
    table = equivalence_steps.compare(records)
    assert sorted(set(table["model"])) == ["cnn", "mlp"]
    assert set(table["verdict"]) == {equivalence_steps.VERDICT_SAME}


def test_the_check_takes_the_first_batches_of_the_shared_order_across_epochs():
    """digits has fewer training samples than 20 batches of 128: the check
    goes on into the next epoch's order, as a timed run would."""
    batches = equivalence.first_batches(42, 100, 250)
    assert len(batches) == 250
    np.testing.assert_array_equal(batches[:100], run_data.epoch_order(42, 0, 100))
    np.testing.assert_array_equal(batches[100:200], run_data.epoch_order(42, 1, 100))
    np.testing.assert_array_equal(batches[200:], run_data.epoch_order(42, 2, 100)[:50])


def test_check_runs_are_the_training_workloads_on_every_backend_on_the_cpu(smoke_config):
    runs = comparisons.check_runs(smoke_config)
    chosen = smoke_config["equivalence_check"]["workloads"]
    assert {"{}/{}".format(run.dataset, run.model) for run in runs} == set(chosen)
    assert {(run.devices, run.threads, run.repeat) for run in runs} == {(0, 1, 1)}
    for name in chosen:
        dataset, model = name.split("/")
        entry = matrix.workload(smoke_config, dataset, model)
        backends = [run.backend for run in runs if (run.dataset, run.model) == (dataset, model)]
        assert backends == matrix.runnable_backends(smoke_config, entry, {"devices": 0})
        assert "keras-torch" in backends and "native-cntk" in backends
    spec = run_spec.check_spec(smoke_config, runs[0])
    assert spec.task == "check" and spec.check_steps == 4
    assert spec.initial_weights.startswith("results/weights/")
    assert spec.as_json() == dict(
        run_spec.spec(smoke_config, runs[0]).as_json(), task="check", check_steps=4
    )
    assert paths.check_dir(runs[0]).startswith("results/checks/")

    del smoke_config["equivalence_check"]["workloads"]
    trained = {
        (entry["dataset"], entry["model"])
        for entry in smoke_config["workloads"]
        if entry.get("task", "train") == "train"
    }
    assert {(run.dataset, run.model) for run in comparisons.check_runs(smoke_config)} == trained
    assert not comparisons.check_runs(dict(smoke_config, initial_weights="own"))
    assert not comparisons.check_runs(dict(smoke_config, equivalence_check={"steps": 0}))


def test_check_settings_are_checked_against_the_config(smoke_config):
    smoke_config["equivalence_check"]["reference"] = "keras-cntk"
    with pytest.raises(matrix.ConfigError, match="reference: 'keras-cntk' is neither median"):
        config_rules.validate(smoke_config)
    smoke_config["equivalence_check"].update(reference="keras-jax", workloads=["digits/vgg"])
    with pytest.raises(matrix.ConfigError, match=r"workloads\[0\]: 'digits/vgg' names no"):
        config_rules.validate(smoke_config)
    smoke_config["equivalence_check"]["workloads"] = ["digits/cnn", "cifar10/vgg_cifar"]
    config_rules.validate(smoke_config)  # a workload not configured is not checked


def test_a_check_run_records_its_curve_from_the_shared_weights(
    tmp_path, numpy_backend, digits_npz, numpy_registry
):
    """Through the harness, as the workflow runs it: the same weights and
    batches give the same curve; another learning rate departs at step 1,
    after the same forward pass."""
    from test_initial_weights import layout_of

    from dlbench.record import record_schema
    from dlbench.run import shared_weights
    from test_harness import spec_for

    features, classes = 28 * 28, 10
    weights = tmp_path / "seed7.npz"
    rng = np.random.RandomState(0)
    shared_weights.write(
        str(weights),
        layout_of(
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
        spec = spec_for(numpy_backend)._replace(
            task="check", check_steps=12, initial_weights=str(weights), seed=42
        )
        spec.hyper["optimizer"]["learning_rate"] = learning_rate
        path = tmp_path / "{}.json".format(name)
        harness.run(
            spec,
            str(digits_npz),
            str(path),
            str(tmp_path / "{}.csv".format(name)),
            registry=numpy_registry,
        )
        found = json.loads(path.read_text())
        assert record_schema.problems(found) == []
        assert found["status"] == "ok", found.get("error")
        assert found["initial_weights"]["loaded"] is True
        assert len(found["check"]["losses"]) == 13 and found["check"]["dropout"] is False
        drawn = found["check"]["dropout_draws"]
        assert drawn["stochastic"] and len(drawn["squared"]) == equivalence.DROPOUT_DRAWS
        records.append(dict(found, backend=name))
    steps = np.genfromtxt(tmp_path / "a.csv", delimiter=",", names=True)
    np.testing.assert_allclose(steps["loss"], records[0]["check"]["losses"])
    assert records[0]["check"]["losses"][-1] < records[0]["check"]["losses"][0]  # it learns

    table = equivalence_steps.compare(records).set_index("backend")
    assert (table.loc[["a", "b", "c"], "largest_relative_difference"] == 0).all()
    assert table.loc["wrong", "verdict"] == "DEPARTS at step 1"
    assert table.loc["wrong", "initial_loss"] == table.loc["a", "initial_loss"]


def test_no_check_records_give_an_empty_table():
    table = equivalence_steps.compare([])
    assert table.empty and list(table.columns) == list(equivalence_steps.TABLE_COLUMNS)


def test_a_check_record_that_breaks_the_schema_is_shown_invalid(tmp_path):
    from dlbench.analysis import collect

    run = matrix.Run("digits", "mlp", "keras-jax", devices=0, threads=1, repeat=1)
    path = tmp_path / paths.check_dir(run) / "check.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"task": "check", "status": "ok"}))
    (found,) = collect.load_records([str(path)])
    assert found["status"] == "invalid" and found["backend"] == "keras-jax"
    (row,) = equivalence_steps.compare([found]).itertuples()
    assert row.verdict.startswith("not compared: invalid: invalid run record")
