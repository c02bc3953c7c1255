"""The verdict on two releases, as asv decides it, and where the time went.

- ``verdict``: "faster" or "slower" where the ratio of the two medians
  passes ``factor`` (the config's ``release_factor``, asv's ``--factor``;
  1.1 by default) and a two-sided Mann-Whitney U test on the two releases'
  samples (every steady epoch of every repeat; inference: every single
  sample's latency) is significant at ``alpha`` (``significance_level``);
  else "same". One test per pair, uncorrected, as asv tests each benchmark.
- ``op_changes``: from the op-level profiles (results/tables/ops.csv), the
  op categories whose time per step grew or shrank by more than the factor,
  largest change first.
- ``steps``: in a series of three and more releases, the releases where the
  level changed: the split of the series into an earlier and a later part
  whose samples differ most significantly with a ratio past the factor,
  then each part split again (binary segmentation), so that a change made
  of small steps between consecutive releases is found where it happened.
"""

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import pandas as pd
from scipy import stats

from dlbench.analysis import op_categories as categories

FASTER, SLOWER, SAME = "faster", "slower", "same"
# A category smaller than this share of the older release's step is left out
# of the changes: its ratio would be noise.
SMALLEST_SHARE = 0.05


def _pooled(samples: Sequence[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(s, float) for s in samples]) if samples else np.array([])


def verdict(
    before: Sequence[np.ndarray], after: Sequence[np.ndarray], factor: float, alpha: float
) -> Tuple[str, float, float]:
    """(verdict, ratio, p): ``before`` and ``after`` are the older and newer
    release's samples (one array per repeat) of a time (lower is faster);
    the ratio is the older's median over the newer's (above 1: faster)."""
    older, newer = _pooled(before), _pooled(after)
    ratio = float(np.median(older) / np.median(newer))
    if len(older) < 2 or len(newer) < 2:
        return SAME, ratio, 1.0
    p = float(stats.mannwhitneyu(older, newer, alternative="two-sided").pvalue)
    if not np.isfinite(p):  # every sample the same value
        return SAME, ratio, 1.0
    if p < alpha and ratio >= factor:
        return FASTER, ratio, p
    if p < alpha and ratio <= 1.0 / factor:
        return SLOWER, ratio, p
    return SAME, ratio, p


def op_changes(
    older: Optional[pd.Series], newer: Optional[pd.Series], factor: float
) -> Optional[str]:
    """``category old -> new ms (+x %)`` of every op category whose time per
    step changed by more than ``factor`` between two releases' op profiles
    (rows of the ops table), largest change first; None without both."""
    if older is None or newer is None:
        return None
    step = float(older.get("window_ms_per_step") or 0.0)
    found = []
    for key in categories.CATEGORY_KEYS + (categories.UNEXPLAINED,):
        a, b = float(older.get(key + "_ms") or 0.0), float(newer.get(key + "_ms") or 0.0)
        if max(a, b) < SMALLEST_SHARE * step:
            continue
        if a == 0 or b / a >= factor or b / a <= 1.0 / factor:
            name = categories.CATEGORY_NAMES.get(key, key)
            change = "new" if a == 0 else "{:+.0f} %".format(100.0 * (b / a - 1.0))
            found.append((abs(b - a), "{} {:.2f} -> {:.2f} ms ({})".format(name, a, b, change)))
    if not found:
        return "no category changed by more than {:g}x".format(factor)
    return "; ".join(text for _, text in sorted(found, reverse=True))


def steps(
    samples: List[Sequence[np.ndarray]], factor: float, alpha: float, start: int = 0
) -> Dict[int, Tuple[str, float, float]]:
    """{index of the first release after a change: (faster or slower, ratio,
    p)} in a series of releases' samples, oldest first (binary segmentation:
    the most significant split past the factor, then each side again)."""
    if len(samples) < 2:
        return {}
    best = None
    for split in range(1, len(samples)):
        before = [s for release in samples[:split] for s in release]
        after = [s for release in samples[split:] for s in release]
        found, ratio, p = verdict(before, after, factor, alpha)
        if found != SAME and (best is None or p < best[3]):
            best = (split, found, ratio, p)
    if best is None:
        return {}
    split, found, ratio, p = best
    marked = {start + split: (found, ratio, p)}
    marked.update(steps(samples[:split], factor, alpha, start))
    marked.update(steps(samples[split:], factor, alpha, start + split))
    return marked
