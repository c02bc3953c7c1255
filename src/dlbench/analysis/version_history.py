"""Three and more releases of one backend as a series: every release that
ran a workload and setting (this machine's, and another machine's of the
same hardware from imported records), oldest first, each release's median
beside the oldest's, and the releases where the level changed marked
(dlbench.analysis.version_verdicts.steps: a step in the series, not only a
difference between consecutive releases)."""

import numpy as np
import pandas as pd

from dlbench.analysis import abstraction, version_verdicts, versions
from dlbench.plan import matrix

SETTING = matrix.cell_columns("machine", "versions")
COLUMNS = (
    ["machine"]
    + SETTING
    + [
        "hardware",
        "task",
        "measure",
        "position",
        "release",
        "ran",
        "median",
        "relative_to_first",
        "repeats",
        "step",
        "step_ratio",
        "step_p",
    ]
)
CAPTION = (
    "Every release of a backend that ran a workload and setting, oldest first (by the "
    "framework's version, then Keras'; this machine's runs and those of machines of the same "
    "hardware), where three or more did: each release's median steady-state epoch time "
    "(inference: one sample's latency) and its ratio to the oldest's. Step: the release from "
    "which the series is faster or slower than before it, found by splitting the series where "
    "its earlier and later releases differ most (a ratio of medians past {factor:g} and a "
    "two-sided Mann-Whitney U test significant at {alpha:g}), then each part again."
)


def caption(factor, alpha):
    return CAPTION.format(factor=factor, alpha=alpha)


def series(metrics, epochs, latencies, factor=1.1, alpha=0.05, fewest=3):
    """One row per release of every series of at least ``fewest`` releases."""
    ok, values = versions.measured_runs(metrics, epochs, latencies)
    rows = []
    for group, runs in ok.groupby(SETTING + ["hardware"], sort=True):
        releases = {}
        for (machine, version), ran in runs.groupby(["machine", "versions"], sort=True):
            key = versions.release_key(ran)
            releases.setdefault(key, []).append((machine, version, ran))
        if len(releases) < fewest:
            continue
        task = runs["task"].iloc[0]
        cell = dict(zip(SETTING + ["hardware"], group))
        measured = values[task].merge(pd.DataFrame([{k: cell[k] for k in SETTING}]))
        ordered = sorted(releases)
        samples = [
            [
                repeat
                for machine, version, _ in releases[key]
                for repeat in versions.per_repeat(measured, machine, version)
            ]
            for key in ordered
        ]
        marked = version_verdicts.steps(samples, factor, alpha)
        machines = " + ".join(sorted({m for found in releases.values() for m, _, _ in found}))
        first = float(np.median(np.concatenate(samples[0]))) if samples[0] else np.nan
        for position, (key, found) in enumerate(zip(ordered, samples)):
            if not found:
                continue
            median = float(np.median(np.concatenate(found)))
            step = marked.get(position)
            rows.append(
                {
                    "machine": machines,
                    **cell,
                    "task": task,
                    "measure": abstraction.MEASURES[task][0],
                    "position": position,
                    "release": versions.release_label(releases[key][0][2]),
                    "ran": "; ".join(
                        "{} on {}".format(version, machine) for machine, version, _ in releases[key]
                    ),
                    "median": median,
                    "relative_to_first": median / first,
                    "repeats": len(found),
                    "step": step[0] if step else None,
                    "step_ratio": step[1] if step else None,
                    "step_p": step[2] if step else None,
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def table(found):
    """The report's layout: a row per release of each series."""
    if found.empty:
        return pd.DataFrame(columns=["workload", "backend", "release"])
    shown = found.assign(
        workload=found["dataset"] + " / " + found["model"],
        median=found["median"].map("{:.4g}".format) + " " + found["measure"],
        relative=found["relative_to_first"].map("{:.2f}".format),
        step=[
            "" if pd.isna(s) else "{} from here ({:.2f}x, p {:.2g})".format(s, r, p)
            for s, r, p in zip(found["step"], found["step_ratio"], found["step_p"])
        ],
    )
    setting = [c for c in matrix.shown_dimensions(found.assign(versions="")) if c != "versions"]
    columns = ["workload"] + setting + ["backend", "release", "median", "relative", "step"]
    return shown[columns].rename(columns={"relative": "time over the oldest's"})
