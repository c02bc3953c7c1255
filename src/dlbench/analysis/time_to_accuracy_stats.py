"""The statistics of time to accuracy, on each seed's seconds to the target
(those that missed right-censored at their last evaluation): MLPerf's
aggregate of a cell's seeds, the Kaplan-Meier median with its interval, the
log-rank test of two backends' seeds and the smallest p it can give.

scipy is imported inside the functions: the collect rule imports
``dlbench.analysis.time_to_accuracy`` (and so this) for its evaluations alone.
"""

import math
import statistics
import warnings
from typing import Optional, Sequence, Tuple

# Fewer seeds than this give a cell no interval for its median time.
FEWEST_SEEDS_FOR_INTERVAL = 3
INTERVAL_LEVEL = 0.95


def mlperf_time(times: Sequence[float]) -> Optional[float]:
    """A cell's time to the target as MLPerf aggregates its runs: ``times``
    sorted, a missed run as ``math.inf`` (infinitely slow); with 3 runs or
    more the fastest and the slowest are dropped and the rest averaged, with
    fewer all are averaged. A missed run is allowed only where it is the
    dropped slowest: None (did not converge) where one is kept, and so
    wherever no run reached the target."""
    ordered = sorted(times)
    kept = ordered[1:-1] if len(ordered) >= 3 else ordered
    if not kept or any(math.isinf(t) for t in kept):
        return None
    return statistics.mean(kept)


def km_median(
    reached: Sequence[float], censored: Sequence[float], level: float = INTERVAL_LEVEL
) -> Tuple[Optional[float], Optional[float], Optional[float]]:
    """The Kaplan-Meier median time to the target of a cell's seeds (those
    that missed right-censored at their last evaluation) and its interval
    (log-log pointwise band of the survival function where it crosses 1/2;
    an upper end of None: not bounded). None where the survival never falls
    to one half (about half the seeds or more missed); no interval with fewer than
    ``FEWEST_SEEDS_FOR_INTERVAL`` seeds."""
    if not reached:
        return None, None, None
    from scipy import stats as scipy_stats  # a second to import: see the module's doc

    data = scipy_stats.CensoredData(uncensored=list(reached), right=list(censored))
    sf = scipy_stats.ecdf(data).sf
    median = _crossing(sf.quantiles, sf.probabilities)
    if median is None or len(reached) + len(censored) < FEWEST_SEEDS_FOR_INTERVAL:
        return median, None, None
    with warnings.catch_warnings():  # undefined where the survival reaches 0: taken as 0 below
        warnings.simplefilter("ignore", RuntimeWarning)
        band = sf.confidence_interval(level, method="log-log")
    gone = sf.probabilities <= 0
    low = _crossing(sf.quantiles, [0.0 if g else p for g, p in zip(gone, band.low.probabilities)])
    high = _crossing(sf.quantiles, [0.0 if g else p for g, p in zip(gone, band.high.probabilities)])
    return median, low, high


def _crossing(times: Sequence[float], survival: Sequence[float]) -> Optional[float]:
    """The first time at which ``survival`` is 1/2 or below."""
    for time, value in zip(times, survival):
        if value == value and value <= 0.5:
            return float(time)
    return None


def logrank_p(
    faster: Tuple[Sequence[float], Sequence[float]], slower: Tuple[Sequence[float], Sequence[float]]
) -> float:
    """The two-sided log-rank p-value of two backends' seeds: (seconds to
    the target of those that reached it, last evaluation's seconds of those
    that did not); nan where every time is the same."""
    from scipy import stats as scipy_stats

    with warnings.catch_warnings():  # nan where every time is the same: the caller says so
        warnings.simplefilter("ignore", RuntimeWarning)
        result = scipy_stats.logrank(
            scipy_stats.CensoredData(uncensored=list(faster[0]), right=list(faster[1])),
            scipy_stats.CensoredData(uncensored=list(slower[0]), right=list(slower[1])),
        )
    return float(result.pvalue)


def smallest_p(seeds_a: int, seeds_b: int) -> float:
    """The log-rank p of ``seeds_a`` seeds that all reach the target before
    any of ``seeds_b``: the smallest these counts can give."""
    return logrank_p(
        ([float(i) for i in range(1, seeds_a + 1)], []),
        ([float(seeds_a + i) for i in range(1, seeds_b + 1)], []),
    )
