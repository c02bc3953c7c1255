"""Why is it slower, op by op: each run's op profile (ops.json, written by
dlbench.run.op_profiling from the framework's own profiler) in one set of
categories (dlbench.analysis.op_categories), and each backend's gap to its
workload's fastest.

A cell's row gives, per step of its profiled window (a training step or a
timed inference call), the milliseconds of each category, the milliseconds
no op explains (``unexplained``: Python, dispatch, the framework's runtime,
a device left idle), which add up to the window's step, and the share the
ops explain (``coverage``). On a GPU the categories are the device's kernels
and the unexplained time is the device's idle time. The window runs after
the timed run's clocks: its step over the timed steady step is the
profiler's own cost (``profiler_cost``). A cell with several repeats takes
the median of each figure over them.
"""

import collections
import math

import pandas as pd

from dlbench import catalog
from dlbench.analysis import op_categories as categories
from dlbench.analysis import plots_stacked_bars, plots_style
from dlbench.analysis.python_stacks import seconds_per_step
from dlbench.plan import matrix
from dlbench.record import op_profile as op_profiling
from dlbench.record.fields import Status

GROUP = [column for column in matrix.CELL if column != "backend"] + ["task"]
# The ops named in a gap, and the "other" ops a row lists.
MOST_OPS = 5
# Categories plus the unexplained rest equal the window's step within this
# share: the ops are recorded between the profiler's start and stop, just
# outside the window's clock.
SUM_TOLERANCE = 0.05


def framework_of(backend):
    found = catalog.BACKENDS.get(backend)
    return found["framework"] if found else None


def ops_per_step(ops_file, framework):
    """[(name, category, calls per step, ms per step)] of one window, the
    device's kernels where the window ran any (a GPU), else the host's ops."""
    steps = ops_file.get("steps") or 0
    if not steps:
        return []
    listed = ops_file.get("ops") or []
    place = (
        op_profiling.DEVICE
        if any(op.get("place") == op_profiling.DEVICE for op in listed)
        else op_profiling.HOST
    )
    found = []
    for op in listed:
        if op.get("place", op_profiling.HOST) != place:
            continue
        category = categories.category_of(framework, op["name"], op.get("scope"))
        found.append(
            (op["name"], category, op["calls"] / float(steps), 1000.0 * op["seconds"] / steps)
        )
    return found


def run_row(record, ops_file, summary_row):
    """One run's row (``table``'s columns) and its ops per step."""
    row = {column: record.get(column) for column in matrix.CELL}
    row["task"] = record.get("task")
    parallel = record.get("parallel") or {}
    row["accelerator"] = parallel.get("accelerator", "cpu") if record.get("devices") else "cpu"
    row["profiler"] = ops_file.get("profiler")
    row["reason"] = ops_file.get("reason")
    if record.get("status") != Status.OK and not row["reason"]:
        row["reason"] = "the run {}: {}".format(record.get("status"), record.get("reason"))
    step = seconds_per_step(record, summary_row or {})
    row["ms_per_step"] = 1000.0 * step if step else None
    steps = ops_file.get("steps") or 0
    window = ops_file.get("window_seconds")
    framework = ops_file.get("framework") or framework_of(record.get("backend"))
    ops = ops_per_step(ops_file, framework)
    if not (steps and window and ops):
        return row, []
    row["steps"] = steps
    row["window_ms_per_step"] = 1000.0 * window / steps
    totals = collections.Counter()
    for _, category, _, ms in ops:
        totals[category] += ms
    for key in categories.CATEGORY_KEYS:
        row[key + "_ms"] = totals.get(key, 0.0)
    explained = sum(totals.values())
    row["ops_ms"] = explained
    row[categories.UNEXPLAINED + "_ms"] = max(0.0, row["window_ms_per_step"] - explained)
    row["coverage"] = explained / row["window_ms_per_step"]
    row["profiler_cost"] = row["window_ms_per_step"] / row["ms_per_step"] if step else None
    busy = ops_file.get("device_busy_seconds")
    row["device_idle_ms"] = 1000.0 * (window - busy) / steps if busy is not None else None
    others = sorted((op for op in ops if op[1] == categories.OTHER), key=lambda op: -op[3])
    row["other_ops"] = "; ".join("{} {:.3g} ms".format(op[0], op[3]) for op in others) or None
    return row, ops


def columns():
    found = list(matrix.CELL) + ["task", "accelerator", "profiler", "steps", "ms_per_step"]
    found += ["window_ms_per_step", "profiler_cost"]
    found += [key + "_ms" for key in categories.CATEGORY_KEYS]
    found += ["ops_ms", categories.UNEXPLAINED + "_ms", "coverage", "device_idle_ms"]
    return found + ["other_ops", "reason"]


def key_of(row):
    return tuple(str(row.get(column)) for column in matrix.CELL)


def table(runs):
    """The cells' table and {cell key: [(name, category, calls, ms) per
    step]} from ``runs``: (record, ops.json, the summary's row) per run; a
    cell's figures are the median over its profiled repeats."""
    rows, ops = collections.defaultdict(list), collections.defaultdict(list)
    for record, ops_file, summary_row in runs:
        row, found = run_row(record, ops_file, summary_row)
        rows[key_of(row)].append(row)
        if found:
            ops[key_of(row)].append(found)
    cells = [_median_row(repeats) for repeats in rows.values()]
    frame = pd.DataFrame(cells, columns=columns())
    frame = frame.sort_values(["dataset", "model", "backend"], kind="stable", ignore_index=True)
    return frame, {key: _mean_ops(found) for key, found in ops.items()}


def _median_row(repeats):
    profiled = [row for row in repeats if row.get("window_ms_per_step") is not None]
    chosen = dict((profiled or repeats)[0])
    for column in columns():
        values = [row.get(column) for row in profiled if _number(row.get(column))]
        if values and isinstance(values[0], float):
            chosen[column] = float(pd.Series(values).median())
    return chosen


def _mean_ops(repeats):
    """Each op's calls and ms per step, averaged over the repeats."""
    total = collections.defaultdict(lambda: [0.0, 0.0])
    category = {}
    for found in repeats:
        for name, kind, calls, ms in found:
            total[name][0] += calls / len(repeats)
            total[name][1] += ms / len(repeats)
            category[name] = kind
    return [(name, category[name], calls, ms) for name, (calls, ms) in total.items()]


def _number(value):
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def shown(found):
    """The table as people read it: ms per step by category, the rest and
    the coverage in percent."""
    view = found[["dataset", "model", "backend"] + matrix.shown_dimensions(found)]
    view = view.assign(
        profiler=found["profiler"],
        ms_per_step=found["ms_per_step"],
        window_ms=found["window_ms_per_step"],
    )
    for key in categories.CATEGORY_KEYS + (categories.UNEXPLAINED,):
        view[categories.CATEGORY_NAMES[key] + " ms"] = found[key + "_ms"]
    view["ops explain %"] = (100.0 * found["coverage"]).round(1)
    view["profiler cost"] = found["profiler_cost"]
    view["other ops"] = found["other_ops"]
    view["no profile"] = found["reason"]
    return view


CAPTION = (
    "Where each cell's step goes, op by op, from the framework's own profiler (torch.profiler, "
    "jax.profiler, TensorFlow's profiler, mx.profiler, Theano's and PyTensor's per-node "
    "profile, Chainer's TimerHook, CNTK's profiler, OpenVINO's performance counters) over a "
    "short window of steady steps (or timed inference calls) that each timed run takes after "
    "its clocks have stopped: milliseconds per step in each category of ops, and the time no "
    "op explains (Python, dispatch, the framework's runtime, a device left idle); categories "
    "plus the rest add up to the window's step. 'ops explain': their share of it. 'profiler "
    "cost': the window's step over the timed steady step. On a GPU the categories are the "
    "device's kernels and the rest its idle time. Ops a framework's table does not know are "
    "'other', listed by name."
)


def gaps(found, ops):
    """For every profiled backend slower than its workload's fastest at the
    same point (by the timed steps): the extra milliseconds of its window's
    step, which categories hold them (each one's part of the difference),
    and the ``MOST_OPS`` ops that add most, with their calls per step (an
    op of the same name in the fastest is subtracted), beside the fastest's
    largest ops of the category that grew most."""
    rows = []
    usable = found[found["window_ms_per_step"].notna() & found["ms_per_step"].notna()]
    for _, cells in usable.groupby(GROUP, dropna=False):
        fastest = cells.loc[cells["ms_per_step"].idxmin()]
        for _, cell in cells.iterrows():
            if cell["backend"] == fastest["backend"]:
                continue
            difference = cell["window_ms_per_step"] - fastest["window_ms_per_step"]
            grown = {
                key: cell[key + "_ms"] - fastest[key + "_ms"]
                for key in categories.CATEGORY_KEYS + (categories.UNEXPLAINED,)
            }
            ranked = sorted(grown.items(), key=lambda item: -item[1])
            where = ", ".join(
                "{} {:+.3g} ms".format(categories.CATEGORY_NAMES[key], value)
                for key, value in ranked[:3]
                if value > 0
            )
            slow_ops, fast_ops = ops.get(key_of(cell), []), ops.get(key_of(fastest), [])
            rows.append(
                {
                    **{column: cell[column] for column in GROUP},
                    "backend": cell["backend"],
                    "fastest": fastest["backend"],
                    "times_slower": cell["ms_per_step"] / fastest["ms_per_step"],
                    "extra_ms_per_step": difference,
                    **{key + "_extra_ms": value for key, value in grown.items()},
                    "where": where or "no category grew under the profiler",
                    "ops_that_add_most": _ops_that_add(slow_ops, fast_ops),
                    "fastest_ops": _largest(fast_ops, ranked[0][0]),
                }
            )
    extra = [key + "_extra_ms" for key in categories.CATEGORY_KEYS + (categories.UNEXPLAINED,)]
    names = GROUP + ["backend", "fastest", "times_slower", "extra_ms_per_step"] + extra
    return pd.DataFrame(rows, columns=names + ["where", "ops_that_add_most", "fastest_ops"])


def _describe(name, calls, ms):
    return "{} ×{:.3g}/step {:+.3g} ms".format(name, calls, ms)


def _ops_that_add(slow_ops, fast_ops):
    fast = {name: ms for name, _, _, ms in fast_ops}
    added = sorted(
        ((ms - fast.get(name, 0.0), name, calls) for name, _, calls, ms in slow_ops),
        reverse=True,
    )
    return "; ".join(_describe(name, calls, ms) for ms, name, calls in added[:MOST_OPS] if ms > 0)


def _largest(ops, category):
    if category == categories.UNEXPLAINED:
        return None
    chosen = sorted((op for op in ops if op[1] == category), key=lambda op: -op[3])[:3]
    return "; ".join(_describe(name, calls, ms) for name, _, calls, ms in chosen) or None


def shown_gaps(found):
    view = found[GROUP[1:] + ["backend", "fastest", "times_slower", "extra_ms_per_step"]]
    view = view.drop(columns=[c for c in ("machine",) if c in view])
    return view.assign(
        where=found["where"],
        ops_that_add_most=found["ops_that_add_most"],
        fastest_ops=found["fastest_ops"],
    )


GAPS_CAPTION = (
    "Why a backend is slower than its workload's fastest at the same point (by the timed "
    "steps), op by op: the extra milliseconds of its profiled step, the categories that hold "
    "most of them, the ops that add most (calls per step, and milliseconds beyond the fastest's "
    "op of the same name), and the fastest's largest ops in the category that grew most. "
    "Op names are each framework's own: between two frameworks every op of the slower counts "
    "as added."
)


def plot(found, dataset, model, path):
    """``figure_of``, written to ``path``."""
    plots_style.save(figure_of(found, dataset, model), path)


def figure_of(found, dataset, model):
    """One workload's backends as stacked bars: milliseconds per step by category."""
    cells = found[(found["dataset"] == dataset) & (found["model"] == model)]
    parts = [
        (key + "_ms", categories.CATEGORY_NAMES[key], None) for key in categories.CATEGORY_KEYS
    ]
    parts.append(
        (
            categories.UNEXPLAINED + "_ms",
            categories.CATEGORY_NAMES[categories.UNEXPLAINED],
            "#d9d9d9",
        )
    )
    return plots_stacked_bars.stacked_bars_figure(
        cells[cells["window_ms_per_step"].notna()],
        parts,
        "ms per training step or inference call in the profiled window, by op category",
        "{} / {}: where the step goes, op by op".format(dataset, model),
        empty="no op profile",
    )
