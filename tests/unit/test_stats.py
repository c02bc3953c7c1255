"""Statistics over repeats: noise flags, Welch tests on log values, Holm."""

import math
import random

import pandas as pd
import pytest
from scipy import stats as scipy_stats

from dlbench.analysis import collect, stats


def test_holm_adjusts_step_down_and_stays_monotone():
    # Holm (1979): sorted p x (m - rank), running maximum, capped at 1.
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0]
    assert stats.holm([]) == []


def test_welch_on_logs_matches_scipy_and_brackets_the_ratio():
    faster, slower = [1.0, 1.1, 0.95], [2.0, 2.3, 1.9]
    ratio, low, high, p_value = stats.welch_log_ratio(faster, slower)
    geometric = math.exp(sum(map(math.log, slower)) / 3 - sum(map(math.log, faster)) / 3)
    assert ratio == pytest.approx(geometric)
    assert low < ratio < high
    expected = scipy_stats.ttest_ind(
        [math.log(v) for v in slower], [math.log(v) for v in faster], equal_var=False
    ).pvalue
    assert p_value == pytest.approx(expected)
    assert p_value < 0.01


def test_identical_repeats_cannot_be_tested():
    assert stats.welch_log_ratio([1.0, 1.0], [2.0, 2.0])[3] is None


def test_noise_needs_two_repeats_and_a_threshold():
    assert stats.coefficient_of_variation([1.0]) is None
    cv = stats.coefficient_of_variation([1.0, 1.2, 0.8])
    assert cv == pytest.approx(0.2)
    assert stats.noisy(cv, 0.1) is True
    assert stats.noisy(cv, 0.25) is False
    assert stats.noisy(None, 0.1) is None


def runs(backend, values, task="train", dataset="d", model="m"):
    column = collect.HEADLINE[task]
    return [
        {
            "dataset": dataset,
            "model": model,
            "backend": backend,
            "machine": "m1",
            "devices": 0,
            "threads": "all",
            "precision": "float32",
            "compile": "auto",
            "versions": "pinned",
            "repeat": i + 1,
            "task": task,
            "status": "ok",
            column: value,
        }
        for i, value in enumerate(values)
    ]


def frame(*groups):
    return pd.DataFrame([row for group in groups for row in group])


def test_pairwise_orders_tests_and_corrects_within_a_workload():
    metrics = frame(
        runs("a", [1.00, 1.02, 0.99, 1.01]),
        runs("b", [2.00, 2.04, 1.98, 2.02]),
        runs("c", [1.01, 0.98, 1.03, 1.00]),
        runs("x", [5.0, 5.1], dataset="other"),
    )
    pairs = stats.pairwise(metrics, collect.HEADLINE)
    mine = pairs[pairs["dataset"] == "d"].set_index(["faster", "slower"])
    assert len(mine) == 3 and (mine["test"] == stats.TEST.format(3)).all()
    assert (mine["p_holm"] >= mine["p_value"]).all()
    assert mine.loc[("a", "b"), "significant"] and mine.loc[("c", "b"), "significant"]
    assert mine.loc[("a", "b"), "ratio"] == pytest.approx(2.0, rel=0.01)
    assert not mine.xs("b", level="slower").empty
    same = mine.loc[[pair for pair in mine.index if set(pair) == {"a", "c"}][0]]
    assert not same["significant"]
    assert len(pairs[pairs["dataset"] == "other"]) == 0  # one backend: no pair


def test_single_runs_are_listed_but_not_tested():
    pairs = stats.pairwise(frame(runs("a", [1.0]), runs("b", [3.0, 3.1])), collect.HEADLINE)
    (row,) = pairs.to_dict("records")
    assert row["test"] == stats.NOT_TESTED and pd.isna(row["p_holm"])
    assert (row["faster"], row["slower"]) == ("a", "b")


def test_failed_runs_are_left_out_of_tests():
    failed = runs("b", [9.0, 9.0, 9.0])
    for row in failed[:2]:
        row["status"] = "failed"
    pairs = stats.pairwise(frame(runs("a", [1.0, 1.1]), failed), collect.HEADLINE)
    assert pairs["slower_repeats"].tolist() == [1] and pairs["test"].tolist() == [stats.NOT_TESTED]


def test_false_positive_rate_stays_near_the_level():
    """Four backends drawn from one distribution: Holm keeps the chance of
    any significant pair at or below the level."""
    rng = random.Random(7)
    trials, any_significant = 300, 0
    for _ in range(trials):
        metrics = frame(*[runs(b, [math.exp(rng.gauss(0, 0.1)) for _ in range(4)]) for b in "abcd"])
        any_significant += bool(stats.pairwise(metrics, collect.HEADLINE)["significant"].any())
    assert any_significant / trials <= 0.05 + 0.03


def test_summary_flags_noise_and_compares_with_the_fastest():
    metrics = frame(runs("a", [1.0, 1.01, 0.99]), runs("b", [2.0, 2.9, 1.3]), runs("c", [3.0]))
    for row in metrics.to_dict("records"):
        assert row["status"] == "ok"
    metrics = metrics.assign(accelerator="cpu", error=None, parameters=10)
    for column in ("first_epoch_seconds", "samples_per_second", "test_accuracy", "jit_compile"):
        metrics[column] = None
    for column in ("latency_p50_ms", "latency_p99_ms", "seconds_per_1000_samples"):
        metrics[column] = None
    summary = collect.summary(metrics, noise_threshold=0.1).set_index("backend")
    assert summary.loc["a", "noisy"] is False and summary.loc["b", "noisy"] is True
    assert pd.isna(summary.loc["c", "noisy"])
    assert summary.loc["a", "vs_fastest"] == "fastest"
    assert summary.loc["c", "vs_fastest"] == "not tested"
    assert summary.loc["b", "relative_to_fastest"] == pytest.approx(2.0)
    assert summary.loc["b", "vs_fastest"] in ("slower", "not different")
