"""The cost of abstraction: Keras on a framework against the same framework's
native implementation of the same workload, from the collected tables.

For training the measure is the steady-state epoch time (every epoch after
the first), for inference the latency of one sample; the slowdown is Keras'
median over native's median, so 1.5 means Keras takes 1.5 times as long.
Its confidence interval comes from a hierarchical bootstrap: repeats are
resampled, then the epochs (or calls) within each chosen repeat, so that
both the variation between runs and within a run widen it.
"""

import numpy as np
import pandas as pd

from dlbench import catalog
from dlbench.plan import matrix
from dlbench.record.fields import Status

PAIR = matrix.cell_columns("backend")
MEASURES = {
    "train": ("steady epoch seconds", "epochs"),
    "infer": ("p50 latency ms", "latencies"),
}
COLUMNS = PAIR + [
    "task",
    "accelerator",
    "framework",
    "keras_backend",
    "native_backend",
    "measure",
    "keras_median",
    "native_median",
    "slowdown",
    "slowdown_ci_low",
    "slowdown_ci_high",
    "ci_level",
    "keras_samples",
    "native_samples",
    "keras_repeats",
    "native_repeats",
]


def steady_epochs(epochs_frame):
    """Epoch seconds after the first, by run."""
    return epochs_frame[epochs_frame["epoch"] > 1].rename(columns={"seconds": "value"})


def latency_calls(latencies_frame):
    return latencies_frame.rename(columns={"ms": "value"})


def _groups(frame, backend, cell):
    """The values of one cell's runs that finished, one array per repeat."""
    chosen = frame[(frame["backend"] == backend) & (frame[PAIR] == list(cell)).all(axis=1)]
    return [group["value"].to_numpy(float) for _, group in chosen.groupby("repeat", sort=True)]


# Values drawn at once in one block of the bootstrap (memory: 8 bytes each).
BLOCK_VALUES = 2_000_000


def hierarchical_medians(groups, draws, rng):
    """``draws`` bootstrap medians: resample the repeats, then the values
    within each chosen repeat, and take the median of what was drawn. All
    draws of a block at once: a repeat shorter than the longest leaves the
    places after its own values empty (NaN), which the median skips."""
    sizes = np.array([len(values) for values in groups])
    longest = int(sizes.max())
    table = np.full((len(groups), longest), np.nan)
    for row, values in enumerate(groups):
        table[row, : len(values)] = values
    per_block = max(1, BLOCK_VALUES // (len(groups) * longest))
    medians = []
    for start in range(0, draws, per_block):
        count = min(per_block, draws - start)
        chosen = rng.integers(len(groups), size=(count, len(groups)))
        chosen_sizes = sizes[chosen][..., None]
        within = rng.integers(0, chosen_sizes, size=(count, len(groups), longest))
        drawn = table[chosen[..., None], within]
        drawn[np.arange(longest) >= chosen_sizes] = np.nan
        medians.append(np.nanmedian(drawn.reshape(count, -1), axis=1))
    return np.concatenate(medians)


def median_ratio_ci(numerator, denominator, level=0.95, draws=2000, seed=0):
    """Median(numerator) / median(denominator) and a percentile bootstrap
    interval for it; each argument is a list of arrays, one per repeat. The
    abstraction cost's slowdown (Keras over native) and the speed-ups of
    precision_and_compile and versions (a baseline over a cell) are this."""
    ratio = np.median(np.concatenate(numerator)) / np.median(np.concatenate(denominator))
    rng = np.random.default_rng(seed)
    drawn = hierarchical_medians(numerator, draws, rng) / hierarchical_medians(
        denominator, draws, rng
    )
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(drawn, [tail, 1.0 - tail])
    return float(ratio), float(low), float(high)


def abstraction_cost(metrics_frame, epochs_frame, latencies_frame, level=0.95, draws=2000):
    """One row per (workload, devices, framework) where both the Keras and
    the native backend of the framework have runs that finished."""
    values = {"epochs": steady_epochs(epochs_frame), "latencies": latency_calls(latencies_frame)}
    ok = metrics_frame[metrics_frame["status"] == Status.OK]
    rows = []
    for keras, native in catalog.keras_native_pairs(set(ok["backend"])):
        both = ok[ok["backend"].isin([keras, native])]
        for cell, runs in both.groupby(PAIR, sort=True):
            if set(runs["backend"]) != {keras, native}:
                continue
            task = runs["task"].iloc[0]
            measure, source = MEASURES[task]
            frame = values[source]
            frame = frame.merge(ok[["backend"] + PAIR + ["repeat"]])
            keras_groups = _groups(frame, keras, cell)
            native_groups = _groups(frame, native, cell)
            if not keras_groups or not native_groups:
                continue  # one epoch only: no steady state to compare
            slowdown, low, high = median_ratio_ci(keras_groups, native_groups, level, draws)
            rows.append(
                {
                    **dict(zip(PAIR, cell)),
                    "task": task,
                    "accelerator": runs["accelerator"].iloc[0],
                    "framework": catalog.BACKENDS[native]["framework"],
                    "keras_backend": keras,
                    "native_backend": native,
                    "measure": measure,
                    "keras_median": float(np.median(np.concatenate(keras_groups))),
                    "native_median": float(np.median(np.concatenate(native_groups))),
                    "slowdown": slowdown,
                    "slowdown_ci_low": low,
                    "slowdown_ci_high": high,
                    "ci_level": level,
                    "keras_samples": sum(len(g) for g in keras_groups),
                    "native_samples": sum(len(g) for g in native_groups),
                    "keras_repeats": len(keras_groups),
                    "native_repeats": len(native_groups),
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def table(cost):
    """The report's layout: a row per workload and measure, a column per
    framework, 'slowdown [CI]'."""
    if cost.empty:
        return pd.DataFrame(columns=["workload", "devices", "measure"])
    setting = matrix.shown_dimensions(cost)
    cost = cost.assign(
        workload=cost["dataset"] + " / " + cost["model"],
        value=[
            "{:.2f} [{:.2f}, {:.2f}]".format(r, lo, hi)
            for r, lo, hi in zip(
                cost["slowdown"], cost["slowdown_ci_low"], cost["slowdown_ci_high"]
            )
        ],
        column=cost["keras_backend"] + " / " + cost["native_backend"],
    )
    shown = cost.pivot(index=["workload"] + setting + ["measure"], columns="column", values="value")
    shown = shown.astype(object).where(shown.notna(), None)  # missing shows as "–", not "nan"
    return shown.reset_index().rename_axis(columns=None)


CAPTION = (
    "Cost of abstraction, as a slowdown: the time of Keras on a framework / the time of the "
    "framework's native implementation of the same model, same data order and "
    "hyper-parameters. Training: median steady-state epoch time (epochs 2 onwards, all "
    "repeats); inference: median latency of one sample. Above 1: Keras is slower (2: twice as "
    "slow). [95 % interval]: hierarchical bootstrap (repeats, then epochs or calls "
    "within a repeat), 2,000 draws. On one repeat the interval covers the variation between "
    "epochs only, not between runs."
)
