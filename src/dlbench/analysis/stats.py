"""How sure is a cell's figure, and is a difference between backends real?

- Noise: the coefficient of variation (standard deviation / mean) of a
  cell's headline figure over its repeats; above a threshold the cell is
  flagged noisy. One repeat cannot say.
- Pairwise tests: for every pair of backends on the same workload and device
  count, Welch's t-test on the logarithm of the repeats' headline figures
  (times are positive and skewed; on the log scale a difference is a ratio,
  the ratio of geometric means, with a Welch confidence interval). The
  p-values of one workload and device count are Holm-corrected together, so
  the chance of any false "significant" among them stays at the level. The
  repeat is the unit: epochs or calls within one run are not independent
  evidence of a difference between runs. Pairs with fewer than two repeats on
  a side are listed as not tested.
"""

import itertools
import math
import statistics
from math import comb
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

from dlbench.analysis import hidden_settings
from dlbench.plan import matrix
from dlbench.record.fields import MEASURED, Status

# The backends compared: those on one workload and setting (machine, devices, ...).
GROUP = matrix.cell_columns("backend")
NOT_TESTED = "not tested: needs 2 repeats or more of each backend"
NO_VARIATION = "not tested: the repeats do not vary"
TEST = "Welch t-test on log values, Holm-corrected over {} pair(s)"


def median_ci(
    values: Iterable[Optional[float]], level: float = 0.95
) -> Tuple[Optional[float], Optional[float], Optional[float], Optional[float]]:
    """Median and a distribution-free interval for it from order statistics:
    [x_(k), x_(n-k+1)] covers the median with probability
    1 - 2 P(Binomial(n, 1/2) < k). Returns the widest-k interval reaching
    ``level``; with too few values for that, [min, max] and its real level."""
    values = sorted(v for v in values if v is not None and v == v)
    n = len(values)
    if n == 0:
        return None, None, None, None
    median = float(pd.Series(values).median())
    if n == 1:
        return median, None, None, None
    chosen_k, coverage = 1, 1 - 2 * 0.5**n
    for k in range(1, n // 2 + 1):
        achieved = 1 - 2 * sum(comb(n, i) for i in range(k)) / 2**n
        if achieved >= level:
            chosen_k, coverage = k, achieved
    return median, values[chosen_k - 1], values[n - chosen_k], coverage


def coefficient_of_variation(values: Iterable[Optional[float]]) -> Optional[float]:
    measured = [float(v) for v in values if v is not None and v == v]
    if len(measured) < 2 or not statistics.mean(measured):
        return None
    return statistics.stdev(measured) / statistics.mean(measured)


def noisy(cv: Optional[float], threshold: float) -> Optional[bool]:
    """True or False, None when one repeat cannot tell."""
    return None if cv is None else bool(cv > threshold)


def welch_log_ratio(
    faster: Sequence[float], slower: Sequence[float], level: float = 0.95
) -> Tuple[float, Optional[float], Optional[float], Optional[float]]:
    """Ratio of geometric means slower / faster, its Welch confidence
    interval and the two-sided p-value of equal log means."""
    log_a = [math.log(v) for v in faster]
    log_b = [math.log(v) for v in slower]
    ratio = math.exp(statistics.mean(log_b) - statistics.mean(log_a))
    if len(set(log_a)) == 1 and len(set(log_b)) == 1:
        return ratio, None, None, None  # no spread: the test is undefined
    # imported here: scipy.stats takes a second and more to import, which
    # every table and plot job would pay for nothing
    from scipy import stats as scipy_stats

    result = scipy_stats.ttest_ind(log_b, log_a, equal_var=False)
    low, high = result.confidence_interval(level)
    return ratio, math.exp(low), math.exp(high), float(result.pvalue)


def holm(p_values: Sequence[float]) -> List[float]:
    """Holm's step-down adjusted p-values, in the order given."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)  # each set below: ``order`` holds every index
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


PAIR_COLUMNS = GROUP + [
    "headline",
    "faster",
    "slower",
    "faster_repeats",
    "slower_repeats",
    "faster_median",
    "slower_median",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "p_holm",
    "significant",
    "test",
    "hidden_settings_differ",
]


def pairwise(
    metrics_frame: pd.DataFrame, headline_of_task: Mapping[str, str], alpha: float = 0.05
) -> pd.DataFrame:
    """One row per pair of backends with successful runs on the same
    workload and device count; ``faster`` has the lower median."""
    ok = metrics_frame[metrics_frame["status"] == Status.OK]
    rows = []
    for group, runs in ok.groupby(GROUP, sort=True):
        column = headline_of_task[runs["task"].iloc[0]]
        values = {
            backend: [float(v) for v in cell[column] if v is not None and v == v and v > 0]
            for backend, cell in runs.groupby("backend")
        }
        values = {backend: found for backend, found in values.items() if found}
        ranked = sorted(values, key=lambda backend: (pd.Series(values[backend]).median(), backend))
        family = []
        for faster, slower in itertools.combinations(ranked, 2):
            row = dict(zip(GROUP, group))
            row.update(
                headline=column,
                faster=faster,
                slower=slower,
                faster_repeats=len(values[faster]),
                slower_repeats=len(values[slower]),
                faster_median=pd.Series(values[faster]).median(),
                slower_median=pd.Series(values[slower]).median(),
                ratio=pd.Series(values[slower]).median() / pd.Series(values[faster]).median(),
                test=NOT_TESTED,
                hidden_settings_differ=hidden_settings.pair_text(
                    runs[runs["backend"] == faster],
                    runs[runs["backend"] == slower],
                    runs["precision"].iloc[0] if "precision" in runs else None,
                ),
            )
            if min(len(values[faster]), len(values[slower])) >= 2:
                ratio, low, high, p_value = welch_log_ratio(values[faster], values[slower])
                row.update(ratio=ratio, ratio_ci_low=low, ratio_ci_high=high, p_value=p_value)
                if p_value is None:
                    row["test"] = NO_VARIATION
                else:
                    family.append(row)
            rows.append(row)
        for row, adjusted in zip(family, holm([row["p_value"] for row in family])):
            row.update(
                p_holm=adjusted, significant=bool(adjusted < alpha), test=TEST.format(len(family))
            )
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def against_fastest(pairs: pd.DataFrame, summary_frame: pd.DataFrame) -> pd.DataFrame:
    """Per cell: its headline over the fastest backend's of the same
    workload and devices, and whether that difference is significant."""
    frame = summary_frame.assign(
        relative_to_fastest=float("nan"), vs_fastest_p_holm=float("nan"), vs_fastest=None
    )
    measured = frame[frame["status"].isin(MEASURED) & frame["headline_median"].notna()]
    for _, cells in measured.groupby(GROUP):
        fastest = cells.loc[cells["headline_median"].idxmin()]
        frame.loc[cells.index, "relative_to_fastest"] = (
            cells["headline_median"] / fastest["headline_median"]
        )
        for index, cell in cells.iterrows():
            if cell["backend"] == fastest["backend"]:
                frame.loc[index, "vs_fastest"] = "fastest"
                continue
            found = pairs[
                (pairs[GROUP] == cell[GROUP].tolist()).all(axis=1)
                & (pairs[["faster", "slower"]] == [fastest["backend"], cell["backend"]]).all(axis=1)
            ]
            if not len(found) or pd.isna(found["p_holm"].iloc[0]):
                frame.loc[index, "vs_fastest"] = "not tested"
                continue
            pair = found.iloc[0]
            frame.loc[index, "vs_fastest_p_holm"] = pair["p_holm"]
            frame.loc[index, "vs_fastest"] = "slower" if pair["significant"] else "not different"
    return frame


def shown(pairs: pd.DataFrame) -> pd.DataFrame:
    """The pairs as people read them: ratio [interval], Holm p with a star."""
    setting = matrix.shown_dimensions(pairs)
    return pairs.assign(
        workload=pairs["dataset"] + " / " + pairs["model"],
        ratio=[_ratio_text(row) for _, row in pairs.iterrows()],
        p_holm=[
            "–" if pd.isna(p) else "{:.3g}{}".format(p, " *" if s else "")
            for p, s in zip(pairs["p_holm"], pairs["significant"])
        ],
    )[["workload"] + setting + SHOWN]


# After the workload and its setting (the devices, and the machine and other
# dimensions where they vary).
SHOWN = ["faster", "slower", "faster_repeats", "slower_repeats", "ratio", "p_holm", "test"]


def _ratio_text(row):
    text = "{:.3g}".format(row["ratio"])
    if pd.notna(row["ratio_ci_low"]):
        text += " [{:.3g}, {:.3g}]".format(row["ratio_ci_low"], row["ratio_ci_high"])
    return text


CAPTION = (
    "Every pair of backends on the same workload and setting (machine, devices, threads): "
    "ratio = slower / faster headline (geometric means over repeats, 95 % Welch interval), "
    "Welch's t-test on the log "
    "values with the repeat as the unit, p-values Holm-corrected over the pairs of the workload "
    "and setting; * significant at family-wise level {alpha}. Pairs with fewer than two "
    "repeats on a side are not tested (the ratio is then of the single runs' figures). "
    "hidden_settings_differ: where the two backends' runs differ in a hidden setting (their "
    "manifests), or recorded none."
)
