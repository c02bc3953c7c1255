"""Speed-ups of precision and compilation against float32 eager, with the
accuracy each costs and the epochs after which compiling pays back."""

import math

import pandas as pd
import pytest

from dlbench.analysis import precision_and_compile

CELL = {"machine": "m", "dataset": "digits", "model": "mlp", "devices": 0, "threads": "all"}
CELL["versions"] = "pinned"


def frames(cells, repeats=3):
    """Metrics and epochs of one backend: ``cells`` maps (precision, compile)
    to (first epoch s, steady epoch s, test accuracy); three epochs a run."""
    metrics, epochs = [], []
    for (precision, mode), (first, steady, accuracy) in cells.items():
        for repeat in range(1, repeats + 1):
            run = dict(CELL, backend="keras-torch", precision=precision, compile=mode)
            run["repeat"] = repeat
            jitter = 0.01 * repeat
            metrics.append(
                dict(
                    run,
                    status="ok",
                    task="train",
                    first_epoch_seconds=first + jitter,
                    steady_epoch_seconds=steady + jitter,
                    test_accuracy=accuracy,
                    test_loss=1.0 - accuracy,
                )
            )
            for epoch, seconds in enumerate([first, steady, steady], start=1):
                epochs.append(dict(run, epoch=epoch, seconds=seconds + jitter))
    empty = pd.DataFrame(columns=list(CELL) + ["backend", "precision", "compile", "repeat", "ms"])
    return pd.DataFrame(metrics), pd.DataFrame(epochs), empty


def test_each_cell_against_float32_eager_with_accuracy_and_break_even():
    metrics, epochs, latencies = frames(
        {
            ("float32", "eager"): (2.0, 1.0, 0.95),
            ("float32", "compiled"): (12.0, 0.5, 0.95),
            ("mixed_bfloat16", "eager"): (1.5, 0.5, 0.80),
        }
    )
    found = precision_and_compile.speedups(metrics, epochs, latencies, tolerance=0.05, draws=200)
    rows = found.set_index(["precision", "compile"])
    assert set(rows["baseline"]) == {"float32, compile=eager"}
    assert rows.loc[("float32", "eager"), "speedup"] == pytest.approx(1.0)
    compiled = rows.loc[("float32", "compiled")]
    assert compiled["speedup"] == pytest.approx(1.02 / 0.52)
    assert compiled["speedup_ci_low"] <= compiled["speedup"] <= compiled["speedup_ci_high"]
    # compiling: 11.5 s of a first epoch beyond its steady work, against
    # eager's 1.0; each steady epoch saves 0.5 s: paid back after 21 epochs
    assert compiled["first_epoch_extra_seconds"] == pytest.approx(10.5)
    assert compiled["break_even_epochs"] == pytest.approx(21.0)
    reduced = rows.loc[("mixed_bfloat16", "eager")]
    assert reduced["accuracy_change"] == pytest.approx(-0.15)
    assert reduced["accuracy_flag"] == "OFF by -0.150"
    shown = precision_and_compile.table(found).set_index("backend")
    assert shown.loc["keras-torch", "float32, compiled"].startswith("1.96x [")
    assert "pays back after 21.0 epochs" in shown.loc["keras-torch", "float32, compiled"]
    assert "acc -0.150 (OFF)" in shown.loc["keras-torch", "mixed_bfloat16, eager"]


def test_without_an_eager_mode_the_baseline_is_float32_compiled():
    metrics, epochs, latencies = frames(
        {("float32", "compiled"): (3.0, 1.0, 0.9), ("mixed_bfloat16", "compiled"): (3.0, 2.0, 0.9)}
    )
    found = precision_and_compile.speedups(metrics, epochs, latencies, tolerance=0.05, draws=100)
    assert set(found["baseline"]) == {"float32, compile=compiled"}
    reduced = found[found["precision"] == "mixed_bfloat16"].iloc[0]
    assert reduced["speedup"] < 1  # emulated bfloat16: slower
    assert reduced["accuracy_flag"] == "within 0.05"


def test_break_even_needs_an_extra_cost_and_a_saving():
    assert precision_and_compile.break_even(10.0, 2.0) == 5.0
    assert precision_and_compile.break_even(10.0, -1.0) == math.inf  # compiled epochs are slower
    assert precision_and_compile.break_even(-1.0, 2.0) is None  # compiling cost nothing extra


def test_the_plot_shows_each_mode_of_each_backend(tmp_path):
    import figures
    from dlbench.analysis import plots_comparisons

    metrics, epochs, latencies = frames(
        {
            ("float32", "eager"): (2.0, 1.0, 0.95),
            ("float32", "compiled"): (12.0, 0.5, 0.95),
            ("mixed_bfloat16", "compiled"): (14.0, 5.0, 0.94),
        }
    )
    found = precision_and_compile.speedups(metrics, epochs, latencies, tolerance=0.05, draws=200)
    (axis,) = plots_comparisons.speedups_figure(found).axes
    # the steady epochs' medians (1.02 s eager, plus 0.01 s a repeat) over each mode's
    shown = figures.points(axis)
    assert set(shown) == {"float32, eager", "float32, compiled", "mixed_bfloat16, compiled"}
    for label, expected in (
        ("float32, eager", 1.0),
        ("float32, compiled", 1.02 / 0.52),
        ("mixed_bfloat16, compiled", 1.02 / 5.02),
    ):
        (x,), (y,) = shown[label]
        assert x == pytest.approx(expected) and -0.5 < y < 0.5, label  # on the one row
    rows = found.set_index(["precision", "compile"])
    for container in axis.containers:
        precision, mode = container.get_label().split(", ")
        interval = rows.loc[(precision, mode), ["speedup_ci_low", "speedup_ci_high"]]
        assert figures.error_bars(container) == [pytest.approx(tuple(interval))]
    (row,) = figures.tick_labels(axis, "y")
    assert row.startswith("digits / mlp") and row.endswith("keras-torch")
    assert axis.get_xscale() == "log"
    assert [1.0, 1.0] in [list(line.get_xdata()) for line in axis.get_lines()]  # the baseline
    plots_comparisons.speedups(found, tmp_path / "speedups.png")
    assert figures.png_shows(tmp_path / "speedups.png", plots_comparisons.speedups_figure(found))
    (axis,) = plots_comparisons.speedups_figure(found.iloc[:0]).axes  # no cell: says so
    assert figures.texts(axis) == ["no cell to compare"] and not axis.containers
