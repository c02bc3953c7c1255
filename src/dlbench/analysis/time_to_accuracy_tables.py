"""The time-to-accuracy tables as people read them, and their captions
(rule time_to_accuracy): the cells' (``shown_cells``) and the pairs'
(``shown_pairs``) of ``dlbench.analysis.time_to_accuracy``."""

from typing import Any, Dict, Mapping

import pandas as pd

from dlbench.analysis import collect
from dlbench.analysis.time_to_accuracy import reached_text
from dlbench.plan import matrix


def _seconds(value: Any) -> str:
    return "–" if value is None or pd.isna(value) else "{:.3g} s".format(value)


def target_text(row: Mapping[str, Any]) -> str:
    """The target and how it was set: "stated: 0.85", "0.911 (derived: ...)"."""
    if pd.isna(row["target"]) or str(row["target_how"]).startswith("stated"):
        return str(row["target_how"])
    return "{:.4g} ({})".format(row["target"], row["target_how"])


def _dimensions(frame: pd.DataFrame) -> Dict[str, pd.Series]:
    """The shown dimensions' columns, each as the other tables name it."""
    return {column: collect.labels(frame, [column]) for column in matrix.shown_dimensions(frame)}


def shown_cells(cells: pd.DataFrame) -> pd.DataFrame:
    """The cells' table as people read it."""
    if not len(cells):
        return pd.DataFrame(columns=["workload", "backend", "verdict"])
    rows = pd.DataFrame(
        {
            "workload": cells["dataset"] + " / " + cells["model"],
            **_dimensions(cells),
            "backend": cells["backend"],
            "target": [target_text(row) for _, row in cells.iterrows()],
            "seeds": cells["seeds"],
            "reached": [reached_text(row) for _, row in cells.iterrows()],
            "steps to target, median [min–max]": [
                "–"
                if pd.isna(row["steps_median"])
                else "{:g} [{:g}–{:g}]".format(
                    row["steps_median"], row["steps_min"], row["steps_max"]
                )
                for _, row in cells.iterrows()
            ],
            "time to target (MLPerf)": [
                _seconds(row["time_to_target"])
                if pd.notna(row["time_to_target"])
                else "did not converge"
                for _, row in cells.iterrows()
            ],
            "median time [95 % KM interval]": [_median_text(row) for _, row in cells.iterrows()],
            "median first epoch": cells["first_epoch_seconds"].map(_seconds),
            "verdict": cells["verdict"],
        }
    )
    return rows


def _median_text(row: Mapping[str, Any]) -> str:
    if pd.isna(row["median_seconds"]):
        return "–"
    text = _seconds(row["median_seconds"])
    if pd.isna(row["median_ci_low"]):
        return text + " (too few seeds for an interval)"
    high = (
        "not bounded" if pd.isna(row["median_ci_high"]) else "{:.3g}".format(row["median_ci_high"])
    )
    return "{} [{:.3g}, {}]".format(text, row["median_ci_low"], high)


def shown_pairs(pairs_frame: pd.DataFrame) -> pd.DataFrame:
    """The pairs' table as people read it."""
    if not len(pairs_frame):
        return pd.DataFrame(columns=["workload", "faster", "slower", "test"])
    return pd.DataFrame(
        {
            "workload": pairs_frame["dataset"] + " / " + pairs_frame["model"],
            **_dimensions(pairs_frame),
            "faster": pairs_frame["faster"],
            "slower": pairs_frame["slower"],
            "reached": pairs_frame["faster_reached"] + " vs " + pairs_frame["slower_reached"],
            "time to target (MLPerf)": [
                "{} vs {}".format(_time_or_not(f), _time_or_not(s))
                for f, s in zip(pairs_frame["faster_time"], pairs_frame["slower_time"])
            ],
            "p": pairs_frame["p_value"].map(lambda p: "–" if pd.isna(p) else "{:.3g}".format(p)),
            "Holm p": [
                "–" if pd.isna(p) else "{:.3g}{}".format(p, " *" if bool(s) else "")
                for p, s in zip(pairs_frame["p_holm"], pairs_frame["significant"])
            ],
            "significant": [
                "–" if pd.isna(p) else ("yes" if bool(s) else "no")
                for p, s in zip(pairs_frame["p_holm"], pairs_frame["significant"])
            ],
            "test": pairs_frame["test"],
        }
    )


def _time_or_not(value: Any) -> str:
    return "did not converge" if value is None or pd.isna(value) else _seconds(value)


CAPTION = (
    "Time to accuracy: per workload, point and backend, the seeds (N: runs that ran ok and "
    "evaluated) and how many reached the target (k of N) on held-out data, evaluated every "
    "evaluate_every steps off the clock. Target: stated in the config, or derived from a "
    "reference backend's seeds at the same point (the median of their best values, less the "
    "margin for accuracy, plus it for loss). Steps to target: the first evaluation at or past "
    "it (median [min–max] over the seeds that reached it). Time to target (MLPerf): the seeds' "
    "training seconds to the target (the first epoch's compiles included, the evaluations not) "
    "sorted with a missed seed as infinitely slow; with 3 seeds or more the fastest and the "
    "slowest are dropped and the rest averaged (fewer: all averaged), so one miss is allowed "
    "only as the dropped slowest; more make the cell 'did not converge'. Median time: "
    "Kaplan-Meier (misses censored at their last evaluation), with a 95 % log-log interval "
    "(none under 3 seeds). Median first epoch: the first epoch's seconds, inside the time to "
    "target. Verdict: against the first backend to the target at the same workload and point "
    "(log-rank, Holm-adjusted at level {alpha}; see the pairs' table)."
)
PAIRS_CAPTION = (
    "Every pair of backends at one workload and point: log-rank test of their seeds' times to "
    "the target (a seed that missed right-censored at its last evaluation), Holm-adjusted over "
    "the pairs of the workload and point; * significant at family-wise level {alpha}. With few "
    "seeds the test cannot reject: 3 seeds a side give p = 0.025 at best, which Holm over 3 "
    "pairs or more never brings below 0.05 (the test column says so). Pairs with fewer than 2 "
    "seeds a side, or where no seed reached the target, are not tested."
)
