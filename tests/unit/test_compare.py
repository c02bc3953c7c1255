"""Keras vs native: the abstraction cost's slowdowns and the lines-of-code counter."""

import textwrap

import numpy as np
import pandas as pd
import pytest

from dlbench import catalog
from dlbench.analysis import abstraction
from dlbench.models import lines
from dlbench.registry import BUILT_IN


def test_pairs_match_each_native_backend_with_its_keras_counterpart():
    backends = {"keras-torch", "native-torch", "native-jax", "keras-tensorflow", "native-chainer"}
    assert catalog.keras_native_pairs(backends) == [("keras-torch", "native-torch")]
    every = set(catalog.BACKENDS)
    assert ("keras2-theano", "native-pytensor") in catalog.keras_native_pairs(every)
    assert all(native != "native-chainer" for _, native in catalog.keras_native_pairs(every))


def test_ratio_of_medians_and_an_interval_that_covers_it():
    rng = np.random.default_rng(1)
    native = [rng.normal(1.0, 0.05, 20) for _ in range(3)]
    keras = [2.0 * values for values in native]
    ratio, low, high = abstraction.median_ratio_ci(keras, native)
    assert ratio == pytest.approx(2.0)
    assert low < 2.0 < high and high - low < 0.3
    constant = abstraction.median_ratio_ci([np.full(5, 3.0)], [np.full(5, 1.5)])
    assert constant == pytest.approx((2.0, 2.0, 2.0))


def test_repeats_of_different_lengths_draw_only_their_own_values():
    """Each chosen repeat gives as many values as it holds, never the empty
    places that pad it to the longest: with two repeats of twelve 1s and one
    of three 100s, a median of 100 needs all three draws of the short one
    (1 in 27); any other choice has a majority of 1s."""
    groups = [np.full(12, 1.0), np.full(12, 1.0), np.full(3, 100.0)]
    medians = abstraction.hierarchical_medians(groups, 4000, np.random.default_rng(0))
    assert len(medians) == 4000 and set(np.unique(medians)) == {1.0, 100.0}
    assert (medians == 100.0).mean() == pytest.approx(1 / 27, abs=0.015)


def test_more_spread_between_repeats_widens_the_interval():
    tight = [np.full(10, 1.0) + 0.01 * np.arange(10) for _ in range(4)]
    spread = [np.full(10, level) + 0.01 * np.arange(10) for level in (0.6, 0.9, 1.2, 1.5)]
    base = [np.full(10, 1.0)]
    _, low_tight, high_tight = abstraction.median_ratio_ci(tight, base)
    _, low_spread, high_spread = abstraction.median_ratio_ci(spread, base)
    assert high_spread - low_spread > 5 * (high_tight - low_tight)


def _frames():
    run = {"machine": "m1", "dataset": "digits", "devices": 0, "threads": "all"}
    run.update(precision="float32", compile="auto", versions="pinned")
    run |= {"accelerator": "cpu", "repeat": 1}
    metrics = pd.DataFrame(
        [
            dict(run, model="mlp", backend="keras-torch", task="train", status="ok"),
            dict(run, model="mlp", backend="native-torch", task="train", status="ok"),
            dict(run, model="lenet", backend="keras-torch", task="infer", status="ok"),
            dict(run, model="lenet", backend="native-torch", task="infer", status="failed"),
            dict(run, model="cnn", backend="keras-jax", task="train", status="ok"),
            dict(run, model="cnn", backend="native-jax", task="train", status="ok"),
        ]
    )
    epochs = pd.DataFrame(
        [
            dict(run, model=model, backend=backend, epoch=epoch, seconds=seconds)
            for model, backend, per_epoch in (
                ("mlp", "keras-torch", [9.0, 3.0, 3.1, 2.9]),
                ("mlp", "native-torch", [5.0, 2.0, 2.0, 2.0]),
                ("cnn", "keras-jax", [7.0]),  # one epoch: no steady state
                ("cnn", "native-jax", [7.0]),
            )
            for epoch, seconds in enumerate(per_epoch, start=1)
        ]
    )
    latencies = pd.DataFrame(
        [
            dict(run, model="lenet", backend=backend, call=call, ms=ms)
            for backend in ("keras-torch", "native-torch")
            for call, ms in enumerate([1.0, 1.1, 0.9])
        ]
    )
    return metrics, epochs, latencies


def test_abstraction_cost_compares_steady_epochs_of_runs_that_finished():
    cost = abstraction.abstraction_cost(*_frames(), draws=200)
    # lenet: native failed; cnn: one epoch each. Only mlp is compared.
    assert list(zip(cost["model"], cost["framework"])) == [("mlp", "torch")]
    row = cost.iloc[0]
    assert row["slowdown"] == pytest.approx(3.0 / 2.0)  # the first epoch left out
    assert row["slowdown_ci_low"] <= row["slowdown"] <= row["slowdown_ci_high"]
    assert (row["keras_samples"], row["native_samples"]) == (3, 3)
    assert row["measure"] == "steady epoch seconds"
    shown = abstraction.table(cost)
    assert shown.loc[0, "keras-torch / native-torch"].startswith("1.50 [")


def test_no_pair_gives_an_empty_table():
    metrics, epochs, latencies = _frames()
    keras_only = metrics[metrics["backend"].str.startswith("keras")]
    cost = abstraction.abstraction_cost(keras_only, epochs, latencies)
    assert cost.empty and list(cost.columns) == abstraction.COLUMNS
    assert abstraction.table(cost).empty


SOURCE = '''
"""A module docstring: not code."""

from dlbench.run.backends import native


def _helper(x):
    # a comment
    return x + 1


def unused():
    return 0


def mlp(x):
    """Docstring,
    two lines."""

    y = _helper(x)  # code with a comment counts
    return y


class Base(object):
    def shared(self):
        return native.batches(4, 2)


class Adapter(Base):
    def build(self):
        return self.shared()

    def train_epoch(self):
        return self._loop()

    def _loop(self):
        total = 0
        for i in range(3):
            total += i
        return total

    def predict(self):
        return 1
'''


def test_lines_follow_what_the_roots_reach_and_skip_comments_and_docstrings(tmp_path):
    path = tmp_path / "module.py"
    path.write_text(textwrap.dedent(SOURCE))
    counter = lines.Counter()
    # mlp: def, y = ..., return (3) + _helper: def, return (2)
    assert counter.count([(path, "mlp")]) == 5
    counter = lines.Counter()
    # build (2) + Base.shared (2) + native.batches (2) + train_epoch (2) + _loop (5)
    assert counter.count([(path, "Adapter", "build"), (path, "Adapter", "train_epoch")]) == 13
    counter = lines.Counter()
    assert counter.count([(path, "Adapter", "predict")]) == 2
    assert counter.count([(path, "Adapter", "predict")]) == 0  # counted once per counter


def test_lines_of_code_table_for_keras_and_native_torch():
    workloads = [("digits", "mlp", "train"), ("digits", "lenet", "infer")]
    table = lines.table(
        [
            workload + (backend,)
            for workload in workloads
            for backend in ("keras-torch", "keras-jax", "native-torch")
        ]
        + [("digits", "cnn", "train", "keras-torch"), ("digits", "lenet", "infer", "native-cudnn")],
        BUILT_IN,
    )
    counts = table.set_index(["model", "backend"])
    assert set(counts["implementation"]) == {"Keras", "native"}
    assert (counts["lines"] == counts["model_lines"] + counts["program_lines"]).all()
    assert (counts["model_lines"] > 3).all() and (counts["program_lines"] > 0).all()
    # what a Keras user writes to train: compile and fit, fewer lines than torch's loop
    assert (
        counts.loc[("mlp", "keras-torch"), "program_lines"]
        < counts.loc[("mlp", "native-torch"), "program_lines"]
    )
    # the native model writes out its initialisation; Keras' is the default
    assert (
        counts.loc[("mlp", "native-torch"), "model_lines"]
        > counts.loc[("mlp", "keras-torch"), "model_lines"]
    )
    # one Keras program serves every Keras backend and every Keras model of a task
    keras = table[table["implementation"] == "Keras"]
    assert keras.groupby("task")["program_lines"].nunique().eq(1).all()
    assert (keras["lines_vs_keras"] == 1.0).all()
    torch_mlp = counts.loc[("mlp", "native-torch")]
    assert torch_mlp["lines_vs_keras"] == round(
        torch_mlp["lines"] / counts.loc[("mlp", "keras-torch"), "lines"], 2
    )
    # a workload without its Keras implementation in the table has no ratio
    alone = lines.table([("digits", "mlp", "train", "native-torch")], BUILT_IN)
    assert alone["lines_vs_keras"].isna().all()
    shown = lines.shown(table)
    assert list(shown["backend"][shown["workload"] == "digits / mlp (train)"]) == [
        "native-torch",
        "keras-jax, keras-torch",
    ]
    assert shown.loc[shown["workload"] == "digits / cnn (train)", "backend"].tolist() == [
        "keras-torch"
    ]


def test_the_lenet_table_names_the_published_ordering_beside_ours():
    table = lines.table(
        [
            ("digits", "lenet", "infer", b)
            for b in ("keras-jax", "native-tensorflow", "native-cudnn")
        ],
        BUILT_IN,
    )
    (levels, ours) = lines.published_order(table)["lenet"]
    assert levels == ["cuDNN", "TensorFlow", "Keras"]
    assert [level for level, _ in ours] == levels  # the published ordering holds here
    counts = table.set_index("backend")["lines"]
    assert dict(ours) == {
        "cuDNN": counts["native-cudnn"],
        "TensorFlow": counts["native-tensorflow"],
        "Keras": counts["keras-jax"],
    }
    sentence = lines.order_sentence(table)
    assert "cuDNN > TensorFlow > Keras" in sentence
    assert "cuDNN {}".format(counts["native-cudnn"]) in sentence
    # one level alone is no ordering
    assert lines.order_sentence(table[table["backend"] == "keras-jax"]) == ""
