"""What precision and compilation buy, and what they cost: every cell
against the same backend's float32 eager cell on the same workload and
setting, from the collected tables.

The speedup is the ratio of medians (the baseline's steady-state epoch time,
or one sample's latency, over the cell's: 2 means twice as fast) with the
hierarchical bootstrap interval of ``abstraction.median_ratio_ci``. A reduced
precision is also judged against float32 at the same compile mode: test
accuracy and loss, flagged past the workload's ``accuracy_tolerance``.
Compilation is judged against eager at the same precision: what the first
epoch pays extra (compiling) and after how many epochs the faster steady
epochs have paid it back.

Where a backend has no eager mode (JAX) the baseline is its float32 cell at
the first mode it has of eager, auto, compiled; the ``baseline`` column
says which.
"""

import math

import numpy as np
import pandas as pd

from dlbench import catalog
from dlbench.analysis import abstraction
from dlbench.plan import matrix
from dlbench.record.fields import Status

# One backend on one workload and setting, but for precision and compile.
GROUP = matrix.cell_columns("precision", "compile")
BASELINE_MODES = ("eager", "auto", "compiled")
COLUMNS = GROUP + [
    "accelerator",
    "precision",
    "compile",
    "task",
    "baseline",
    "measure",
    "baseline_median",
    "median",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "ci_level",
    "repeats",
    "test_accuracy",
    "float32_test_accuracy",
    "accuracy_change",
    "test_loss",
    "float32_test_loss",
    "accuracy_flag",
    "first_epoch_extra_seconds",
    "steady_epoch_saving_seconds",
    "break_even_epochs",
]


def _values(metrics, epochs, latencies):
    """Steady epochs and latency calls with their run's cell."""
    keys = GROUP + ["precision", "compile", "repeat"]
    ok = metrics.loc[metrics["status"] == Status.OK, keys]
    return {
        "train": abstraction.steady_epochs(epochs).merge(ok),
        "infer": abstraction.latency_calls(latencies).merge(ok),
    }


def _per_repeat(frame, precision, mode):
    chosen = frame[(frame["precision"] == precision) & (frame["compile"] == mode)]
    return [g["value"].to_numpy(float) for _, g in chosen.groupby("repeat", sort=True)]


def _median(runs, precision, mode, column):
    chosen = runs[(runs["precision"] == precision) & (runs["compile"] == mode)][column]
    return float(chosen.median()) if chosen.notna().any() else None


def break_even(extra_seconds, saving_seconds):
    """Epochs of steady training after which compiling has paid for its
    first epoch: ``extra / saving``; None where compiling costs nothing
    extra, inf where its epochs are no faster."""
    if extra_seconds is None or saving_seconds is None or extra_seconds <= 0:
        return None
    return extra_seconds / saving_seconds if saving_seconds > 0 else math.inf


def speedups(metrics, epochs, latencies, tolerance, level=0.95, draws=2000):
    """One row per cell that has a baseline (float32 at eager, auto or
    compiled) on its backend, workload and setting, the baseline itself
    included (speed-up 1). ``tolerance``: the accuracy change flagged."""
    values = _values(metrics, epochs, latencies)
    ok = metrics[metrics["status"] == Status.OK]
    rows = []
    for group, runs in ok.groupby(GROUP, sort=True):
        task = runs["task"].iloc[0]
        measured = values[task].merge(pd.DataFrame([dict(zip(GROUP, group))]))
        floats = set(runs.loc[runs["precision"] == catalog.FLOAT32, "compile"])
        base_mode = next((mode for mode in BASELINE_MODES if mode in floats), None)
        base = _per_repeat(measured, catalog.FLOAT32, base_mode) if base_mode else []
        if not base:
            continue  # no float32 cell with a steady state to compare with
        cells = (
            runs[["precision", "compile"]].drop_duplicates().sort_values(["precision", "compile"])
        )
        for precision, mode in cells.itertuples(index=False):
            these = _per_repeat(measured, precision, mode)
            if not these:
                continue
            speedup, low, high = abstraction.median_ratio_ci(base, these, level, draws)
            row = {
                **dict(zip(GROUP, group)),
                "accelerator": runs["accelerator"].iloc[0] if "accelerator" in runs else None,
                "precision": precision,
                "compile": mode,
                "task": task,
                "baseline": "float32, compile={}".format(base_mode),
                "measure": abstraction.MEASURES[task][0],
                "baseline_median": float(np.median(np.concatenate(base))),
                "median": float(np.median(np.concatenate(these))),
                "speedup": speedup,
                "speedup_ci_low": low,
                "speedup_ci_high": high,
                "ci_level": level,
                "repeats": len(these),
            }
            if task == "train":
                row.update(_accuracy(runs, precision, mode, tolerance))
                row.update(_compilation(runs, precision, mode))
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _accuracy(runs, precision, mode, tolerance):
    """The cell's test accuracy and loss beside float32's at the same mode."""
    accuracy = _median(runs, precision, mode, "test_accuracy")
    reference = _median(runs, catalog.FLOAT32, mode, "test_accuracy")
    found = {
        "test_accuracy": accuracy,
        "float32_test_accuracy": reference,
        "test_loss": _median(runs, precision, mode, "test_loss"),
        "float32_test_loss": _median(runs, catalog.FLOAT32, mode, "test_loss"),
    }
    if precision != catalog.FLOAT32 and accuracy is not None and reference is not None:
        found["accuracy_change"] = accuracy - reference
        found["accuracy_flag"] = (
            "OFF by {:+.3f}".format(accuracy - reference)
            if abs(accuracy - reference) > tolerance
            else "within {:g}".format(tolerance)
        )
    return found


def _compilation(runs, precision, mode):
    """What compiling cost in the first epoch against eager at the same
    precision, what it saves a steady epoch, and the break-even."""
    if mode != "compiled":
        return {}
    first = _median(runs, precision, mode, "first_epoch_seconds")
    eager_first = _median(runs, precision, "eager", "first_epoch_seconds")
    steady = _median(runs, precision, mode, "steady_epoch_seconds")
    eager_steady = _median(runs, precision, "eager", "steady_epoch_seconds")
    if None in (first, eager_first, steady, eager_steady):
        return {}
    # The first epoch holds one steady epoch's work besides the compiling.
    extra = (first - steady) - (eager_first - eager_steady)
    saving = eager_steady - steady
    return {
        "first_epoch_extra_seconds": extra,
        "steady_epoch_saving_seconds": saving,
        "break_even_epochs": break_even(extra, saving),
    }


def _speedup_text(row):
    text = "{:.2f}x [{:.2f}, {:.2f}]".format(
        row["speedup"], row["speedup_ci_low"], row["speedup_ci_high"]
    )
    if isinstance(row.get("accuracy_flag"), str):
        text += ", acc {:+.3f} ({})".format(
            row["accuracy_change"], row["accuracy_flag"].split(" by")[0]
        )
    epochs = row.get("break_even_epochs")
    if epochs is not None and not pd.isna(epochs):
        text += ", pays back after {}".format(
            "never" if math.isinf(epochs) else "{:.1f} epochs".format(epochs)
        )
    return text


def table(found):
    """The report's layout: a row per workload, setting and backend, a
    column per precision and compile mode."""
    if found.empty:
        return pd.DataFrame(columns=["workload", "backend", "baseline"])
    setting = [c for c in matrix.shown_dimensions(found) if c not in ("precision", "compile")]
    found = found.assign(
        workload=found["dataset"] + " / " + found["model"],
        value=[_speedup_text(row) for row in found.to_dict("records")],
        column=found["precision"] + ", " + found["compile"],
    )
    index = ["workload"] + setting + ["backend", "baseline"]
    shown = found.pivot(index=index, columns="column", values="value")
    shown = shown.astype(object).where(shown.notna(), None)
    return shown.reset_index().rename_axis(columns=None)


CAPTION = (
    "Precision and compilation: each backend's cells against its own float32 eager cell (or, "
    "where it has no eager mode, the baseline named) on the same workload and setting. "
    "Speed-up: the baseline's median steady-state epoch time (inference: one sample's latency) "
    "over the cell's, above 1 faster, [95 % hierarchical bootstrap interval]. acc: the change "
    "in test accuracy against float32 at the same compile mode, flagged past the workload's "
    "accuracy_tolerance. Pays back: epochs of training after which compiling's slower first "
    "epoch is paid for by its faster steady epochs (never: they are not faster)."
)
