"""Time to accuracy: which backend trains a workload to a target on
held-out data first, over seeds (config: a workload's ``time_to_accuracy``).

Every training run of such a workload evaluates on held-out data every
``evaluate_every`` steps, off the clock; its record's ``evaluations`` hold
each evaluation's step, epoch, training seconds so far (the first epoch's
compiles included) and validation loss and accuracy, the first at step 0.

- ``evaluations``: one row per run and evaluation (results/evaluations.csv).
- The target: the workload's number ("stated"), or derived the AlgoPerf way
  from a reference backend's runs at the same point ("derived"): the median
  over its seeds of each seed's best value (the highest accuracy, the lowest
  loss), less the margin for accuracy, plus it for loss.
- ``per_run``: each run reached the target or not; the first evaluation at
  or past it (>= for accuracy, <= for loss) gives the steps and the training
  seconds to it, the first epoch's seconds beside them.
- ``per_cell``: k of N seeds reached; the steps to the target (median,
  range); the time to the target as MLPerf aggregates it (``mlperf_time``);
  the Kaplan-Meier median time with its interval; the verdict against the
  first backend to the target at the same workload and point.
- ``pairs``: every pair of backends at one workload and point, a log-rank
  test on their seeds' times to the target (a missed run right-censored at
  its last evaluation), Holm-adjusted over the pairs of that workload and
  point. With few seeds the test cannot reject: the table says so.

The tables as people read them and their captions:
``dlbench.analysis.time_to_accuracy_tables``.

The statistics (MLPerf's aggregate, Kaplan-Meier, log-rank):
``dlbench.analysis.time_to_accuracy_stats``.
"""

import itertools
import math
import statistics
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from dlbench.analysis import collect, stats
from dlbench.analysis.time_to_accuracy_stats import km_median, logrank_p, mlperf_time, smallest_p
from dlbench.plan import matrix
from dlbench.record.contract import Record
from dlbench.record.fields import Status

EVALUATION_FIELDS = ["step", "epoch", "training_seconds", "val_loss", "val_accuracy"]
EVALUATION_COLUMNS = collect.RUN + ["seed"] + EVALUATION_FIELDS
# The backends compared: those of one workload at one point (machine, devices, ...).
GROUP = matrix.cell_columns("backend")
METRICS = {"val_accuracy": "validation accuracy", "val_loss": "validation loss"}
DEFAULT_METRIC = "val_accuracy"
# A pair is tested where each backend has this many seeds or more.
FEWEST_SEEDS_FOR_TEST = 2

Settings = Mapping[str, Any]


def evaluations(records: Iterable[Record]) -> pd.DataFrame:
    """One row per run and held-out evaluation: the run's columns
    (``collect.RUN``), its seed and the evaluation's step, epoch, training
    seconds, validation loss and accuracy; empty, with those columns, where
    no record has evaluations."""
    rows = []
    for record in records:
        cell = {
            key: str(value) if key in collect.TEXT_COLUMNS else value
            for key, value in matrix.record_cell(record).items()
        }
        for evaluation in record.get("evaluations") or []:
            rows.append(
                {
                    **cell,
                    "seed": record.get("seed"),
                    **{name: evaluation.get(name) for name in EVALUATION_FIELDS},
                }
            )
    frame = pd.DataFrame(rows, columns=EVALUATION_COLUMNS)
    return frame.sort_values(collect.RUN + ["step"], ignore_index=True) if len(frame) else frame


def settings_of(config: matrix.Config) -> Dict[str, Settings]:
    """{"dataset/model": its ``time_to_accuracy``} of the config's training
    workloads that have one (``matrix.workload`` gives each entry)."""
    found = {}
    for listed in config["workloads"]:
        entry = matrix.workload(config, listed["dataset"], listed["model"])
        if entry.get("time_to_accuracy") and entry.get("task", "train") == "train":
            found["{}/{}".format(entry["dataset"], entry["model"])] = entry["time_to_accuracy"]
    return found


def metric_of(setting: Settings) -> str:
    return setting.get("metric") or DEFAULT_METRIC


def _lower_is_better(metric: str) -> bool:
    return metric == "val_loss"


def best(values: Iterable[Any], metric: str) -> Optional[float]:
    """A run's best value of ``metric``: the highest accuracy, the lowest
    loss; None where it has none."""
    found = [float(v) for v in values if v is not None and v == v]
    if not found:
        return None
    return min(found) if _lower_is_better(metric) else max(found)


def reaches(value: Any, target: float, metric: str) -> bool:
    """Whether an evaluation's ``value`` is at or past the target."""
    if value is None or value != value:
        return False
    return float(value) <= target if _lower_is_better(metric) else float(value) >= target


def target_of(
    setting: Settings, reference_curves: Sequence[pd.DataFrame]
) -> Tuple[Optional[float], str]:
    """The target's value and how it was set: the stated number, or derived
    from ``reference_curves`` (the evaluations of each counted run of the
    reference backend at this workload and point)."""
    metric = metric_of(setting)
    given = setting["target"]
    if not isinstance(given, Mapping):
        return float(given), "stated: {:g}".format(given)
    reference, margin = given["reference"], float(given.get("margin", 0.0))
    bests = [
        b for b in (best(curve[metric], metric) for curve in reference_curves) if b is not None
    ]
    if not bests:
        return None, "none: {} has no evaluated run here to derive it from".format(reference)
    median = statistics.median(bests)
    lower = _lower_is_better(metric)
    value = median + margin if lower else median - margin
    return value, "derived: {}'s median best {} over {} seed{} ({:.4g}) {} {:g}".format(
        reference,
        metric,
        len(bests),
        "" if len(bests) == 1 else "s",
        median,
        "plus" if lower else "less",
        margin,
    )


RUN_COLUMNS = collect.RUN + [
    "accelerator",
    "seed",
    "status",
    "counted",
    "metric",
    "target",
    "target_how",
    "reached",
    "steps_to_target",
    "seconds_to_target",
    "first_epoch_seconds",
    "of_which_first_epoch",
    "last_seconds",
    "best",
]


def per_run(
    evaluations_frame: pd.DataFrame, metrics_frame: pd.DataFrame, settings: Mapping[str, Settings]
) -> pd.DataFrame:
    """One row per run of a workload in ``settings`` ({"dataset/model": its
    time_to_accuracy}): whether it counts (ran ok and has evaluations), the
    target of its workload and point, whether it reached it, the steps and
    training seconds to the first evaluation at or past it, the record's
    first-epoch seconds and the part of the time to the target spent in the
    first epoch (``of_which_first_epoch``: compiles and warm-up apart), the
    last evaluation's training seconds (where a missed run is censored) and
    its best value."""
    curves = {
        key: curve.sort_values("step")
        for key, curve in evaluations_frame.groupby(collect.RUN, sort=False)
    }
    rows: List[Dict[str, Any]] = []
    for name, setting in settings.items():
        dataset, model = name.split("/", 1)
        metric = metric_of(setting)
        runs = metrics_frame[
            (metrics_frame["dataset"] == dataset)
            & (metrics_frame["model"] == model)
            & (metrics_frame["task"] == "train")
        ]
        for _, point in runs.groupby(GROUP, sort=True):
            found = {}
            for _, run in point.iterrows():
                curve = curves.get(tuple(run[collect.RUN]))
                counted = run["status"] == Status.OK and curve is not None and len(curve) > 0
                found[tuple(run[collect.RUN])] = (run, curve if counted else None)
            reference = setting["target"].get("reference") if _derived(setting) else None
            target, how = target_of(
                setting,
                [c for r, c in found.values() if c is not None and r["backend"] == reference],
            )
            for run, curve in found.values():
                rows.append(_run_row(run, curve, metric, target, how))
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def _derived(setting: Settings) -> bool:
    return isinstance(setting["target"], Mapping)


def _run_row(
    run: pd.Series, curve: Optional[pd.DataFrame], metric: str, target: Optional[float], how: str
) -> Dict[str, Any]:
    first_epoch = run.get("first_epoch_seconds")
    row = {
        **{column: run[column] for column in collect.RUN},
        "accelerator": run.get("accelerator"),
        "seed": run.get("seed"),
        "status": run["status"],
        "counted": curve is not None,
        "metric": metric,
        "target": target,
        "target_how": how,
        "first_epoch_seconds": first_epoch,
    }
    if curve is None:
        return row
    row["last_seconds"] = float(curve["training_seconds"].iloc[-1])
    row["best"] = best(curve[metric], metric)
    if target is None:
        return row
    hits = curve[[reaches(value, target, metric) for value in curve[metric]]]
    row["reached"] = bool(len(hits))
    if len(hits):
        first = hits.iloc[0]
        row["steps_to_target"] = int(first["step"])
        row["seconds_to_target"] = float(first["training_seconds"])
        if first_epoch is not None and first_epoch == first_epoch:
            row["of_which_first_epoch"] = min(float(first_epoch), row["seconds_to_target"])
    return row


CELL_COLUMNS = collect.CELL + [
    "accelerator",
    "metric",
    "target",
    "target_how",
    "seeds",
    "reached",
    "not_counted",
    "steps_median",
    "steps_min",
    "steps_max",
    "time_to_target",
    "median_seconds",
    "median_ci_low",
    "median_ci_high",
    "first_epoch_seconds",
    "verdict",
]


def per_cell(runs: pd.DataFrame, pairs_frame: pd.DataFrame) -> pd.DataFrame:
    """One row per cell of ``per_run``'s runs: seeds counted (N) and reached
    (k), the steps to the target (median and range over the seeds that
    reached it), the MLPerf time (``mlperf_time``), the Kaplan-Meier median
    and interval (``km_median``), the median first epoch, and the verdict:
    did not converge (k of N reached), first to the target, or later than
    the first (significantly or not, by ``pairs_frame``: ``pairs`` of the
    same runs)."""
    rows = []
    for cell, found in runs.groupby(collect.CELL, sort=True):
        counted = found[found["counted"].astype(bool)]
        hit = counted[counted["reached"].astype("boolean").fillna(False).astype(bool)]
        steps = hit["steps_to_target"].astype(float)
        median, low, high = km_median(*_times(counted))
        rows.append(
            {
                **dict(zip(collect.CELL, cell)),
                "accelerator": found["accelerator"].iloc[0],
                "metric": found["metric"].iloc[0],
                "target": found["target"].iloc[0],
                "target_how": found["target_how"].iloc[0],
                "seeds": len(counted),
                "reached": len(hit),
                "not_counted": len(found) - len(counted),
                "steps_median": steps.median() if len(hit) else None,
                "steps_min": steps.min() if len(hit) else None,
                "steps_max": steps.max() if len(hit) else None,
                "time_to_target": _cell_time(counted),
                "median_seconds": median,
                "median_ci_low": low,
                "median_ci_high": high,
                "first_epoch_seconds": counted["first_epoch_seconds"].median()
                if len(counted)
                else None,
            }
        )
    frame = pd.DataFrame(rows, columns=CELL_COLUMNS)
    frame["verdict"] = [_verdict(row, pairs_frame) for _, row in frame.iterrows()]
    return frame


def _times(counted: pd.DataFrame) -> Tuple[List[float], List[float]]:
    """The seconds to the target of the seeds that reached it, and the last
    evaluation's seconds of those that did not (where they are censored)."""
    if pd.isna(counted["target"]).all():
        return [], []
    hit = counted["reached"].astype("boolean").fillna(False).astype(bool)
    return (
        counted.loc[hit, "seconds_to_target"].astype(float).tolist(),
        counted.loc[~hit, "last_seconds"].astype(float).tolist(),
    )


def _cell_time(counted: pd.DataFrame) -> Optional[float]:
    if not len(counted) or pd.isna(counted["target"]).all():
        return None
    hit = counted["reached"].astype("boolean").fillna(False).astype(bool)
    return mlperf_time(
        [float(t) if h else math.inf for t, h in zip(counted["seconds_to_target"], hit)]
    )


def reached_text(row: Mapping[str, Any]) -> str:
    return "{} of {}".format(int(row["reached"]), int(row["seeds"]))


def _verdict(row: pd.Series, pairs_frame: pd.DataFrame) -> str:
    """The cell's verdict: no target, no run, did not converge, or its place
    against the first backend of its workload and point to the target."""
    if pd.isna(row["target"]):
        return "no target ({})".format(row["target_how"])
    if not row["seeds"]:
        return "no evaluated run ({} not ok)".format(int(row["not_counted"]))
    if pd.isna(row["time_to_target"]):
        return "did not converge ({} reached)".format(reached_text(row))
    text = ""
    if row["reached"] < row["seeds"]:
        text = " (one miss dropped as the slowest)"
    if row["not_counted"]:
        text += " ({} run(s) not ok, not counted)".format(int(row["not_counted"]))
    same = pairs_frame[(pairs_frame[GROUP] == row[GROUP].tolist()).all(axis=1)]
    if not len(same):
        return "reached" + text
    first = same["faster"].iloc[0]  # the pairs are in rank order: the first's come first
    if row["backend"] == first:
        return "first to the target" + text
    pair = same[(same["faster"] == first) & (same["slower"] == row["backend"])].iloc[0]
    if pd.isna(pair["p_holm"]):
        return "later than {}, {}{}".format(first, pair["test"], text)
    word = "significantly later" if bool(pair["significant"]) else "not significantly later"
    return "{} than {} (Holm p={:.2g}){}".format(word, first, pair["p_holm"], text)


PAIR_COLUMNS = GROUP + [
    "accelerator",
    "metric",
    "target",
    "faster",
    "slower",
    "faster_reached",
    "slower_reached",
    "faster_time",
    "slower_time",
    "p_value",
    "p_holm",
    "significant",
    "smallest_p",
    "test",
]
NOT_TESTED = "not tested: needs {} seeds or more of each backend".format(FEWEST_SEEDS_FOR_TEST)
NONE_REACHED = "not tested: no seed of either backend reached the target"
NO_TARGET = "not tested: no target"
NO_VARIATION = "not tested: every seed's time to the target is the same"
TEST = "log-rank on the seeds' times to the target (a miss censored), Holm over {} pair(s)"
CANNOT_REJECT = (
    "; cannot be significant: even wholly separated seeds give a Holm p of {:.2g} or more"
)


def pairs(runs: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of backends at one workload and point: the first to the
    target first (the lower MLPerf time, then the lower Kaplan-Meier median,
    then more seeds reached), a log-rank test of their seeds' times to the
    target (``scipy.stats.logrank`` on ``CensoredData``: a missed seed
    right-censored at its last evaluation), Holm-adjusted over the tested
    pairs of the workload and point, significant below ``alpha``.
    ``smallest_p``: the p the test gives these seed counts when every seed
    of one backend reaches the target before any of the other's: the
    floor under its p-values, which with 3 seeds a side and several pairs
    no Holm-adjusted p can pass below 0.05."""
    rows = []
    counted = runs[runs["counted"].astype(bool)] if len(runs) else runs
    for group, point in counted.groupby(GROUP, sort=True):
        times = {backend: _times(seeds) for backend, seeds in point.groupby("backend")}
        time = {backend: _cell_time(seeds) for backend, seeds in point.groupby("backend")}
        ranked = sorted(times, key=lambda b: _rank(time[b], times[b], b))
        family = []
        for faster, slower in itertools.combinations(ranked, 2):
            fast, slow = times[faster], times[slower]
            row = {
                **dict(zip(GROUP, group)),
                "accelerator": point["accelerator"].iloc[0],
                "metric": point["metric"].iloc[0],
                "target": point["target"].iloc[0],
                "faster": faster,
                "slower": slower,
                "faster_reached": "{} of {}".format(len(fast[0]), sum(map(len, fast))),
                "slower_reached": "{} of {}".format(len(slow[0]), sum(map(len, slow))),
                "faster_time": time[faster],
                "slower_time": time[slower],
                "test": NOT_TESTED,
            }
            if pd.isna(row["target"]):
                row["test"] = NO_TARGET
            elif min(sum(map(len, fast)), sum(map(len, slow))) < FEWEST_SEEDS_FOR_TEST:
                pass
            elif not fast[0] and not slow[0]:
                row["test"] = NONE_REACHED
            else:
                row["p_value"] = logrank_p(fast, slow)
                if math.isnan(row["p_value"]):  # every time one and the same
                    row.update(p_value=None, test=NO_VARIATION)
                else:
                    row["smallest_p"] = smallest_p(sum(map(len, fast)), sum(map(len, slow)))
                    family.append(row)
            rows.append(row)
        adjusted = stats.holm([row["p_value"] for row in family])
        # Holm's first step multiplies the smallest p by the pairs: no adjusted p is below
        floor = min((row["smallest_p"] for row in family), default=1.0) * len(family)
        for row, p_holm in zip(family, adjusted):
            row.update(p_holm=p_holm, significant=bool(p_holm < alpha))
            row["test"] = TEST.format(len(family))
            if floor >= alpha:
                row["test"] += CANNOT_REJECT.format(min(1.0, floor))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def _rank(
    time: Optional[float], times: Tuple[List[float], List[float]], backend: str
) -> Tuple[float, float, float, str]:
    reached, censored = times
    median = km_median(reached, censored)[0]
    share = len(reached) / (len(reached) + len(censored)) if reached or censored else 0.0
    return (
        math.inf if time is None else time,
        math.inf if median is None else median,
        -share,
        backend,
    )
