"""Like with like: the hidden settings each run recorded (its manifest,
``settings.manifest``, dlbench.run.manifest) set side by side wherever the
tables compare runs. A cell whose compared settings differ from the other
backends' on the same workload and setting says which and how; a run that
recorded no manifest (written before it existed) says so, and is flagged
too: nothing says it ran like the others.
"""

import json
from collections import Counter

import pandas as pd

from dlbench.plan import matrix
from dlbench.record import contract
from dlbench.record.contract import COMPARED_SETTINGS as COMPARED
from dlbench.record.contract import NOT_RECORDED

COLUMN = "hidden_settings_differ"
CAPTION = (
    " Hidden settings differ: the settings frameworks default differently that change speed "
    "or numbers (float32 arithmetic, cuDNN autotuning, deterministic algorithms, threads, "
    "oneDNN's math mode, denormals; each run's manifest, read back from the framework) where "
    "this backend's differ from the others' on the same workload and setting, or 'not "
    "recorded' for a run written before the manifest. The report's manifest table lists "
    "every backend's."
)


TABLE_CAPTION = (
    "Each backend's hidden settings as its runs recorded them (settings.manifest), one row per "
    "backend, machine and distinct manifest; n/a: the framework has no such setting there; "
    "not recorded: runs written before the manifest."
)


def of_record(record):
    """The compared settings of a run's manifest as JSON (one text per
    distinct manifest), ``not recorded`` where the run has none; None for
    a run that never set up (no settings)."""
    settings = record.get("settings")
    if not settings:
        return None
    found = settings.get("manifest")
    if not isinstance(found, dict):
        return NOT_RECORDED
    return json.dumps({key: found[key] for key in COMPARED if key in found}, sort_keys=True)


def parse(text):
    """A manifest column's value as a dict; None where not recorded or missing."""
    if not isinstance(text, str) or text == NOT_RECORDED:
        return None
    return json.loads(text)


# The value every backend is set to where it can be (dlbench.run.manifest):
# a run with another differs from the best documented settings, whatever
# the other rows hold. Denormals are flushed by torch (set), TensorFlow and
# XLA (their default); the frameworks that compute with numpy keep them.
BEST = {
    "cudnn_autotune": "True",
    "deterministic": "False",
    "denormals": "flushed",
    "onednn_fpmath_mode": "strict",
}
# ... and in float32 (not tf32), IEEE arithmetic.
BEST_FLOAT32 = dict(
    BEST, float32_matmul="ieee", float32_convolution="ieee", float32_observed="ieee"
)


def best_for(precision):
    return BEST if precision == "tf32" else BEST_FLOAT32


def differing(manifests, best=None):
    """{name: "setting value (...)"} for every name whose compared settings
    differ ({name: manifest dict, or None where not recorded}): from the
    ``best`` value where it names one, else from the others'. A value held
    by more names than any other is the usual one; without one, every
    name's value is named."""
    best = BEST_FLOAT32 if best is None else best
    found = {name: [] for name in manifests}
    for name, manifest in manifests.items():
        if manifest is None:
            found[name].append(NOT_RECORDED)
    recorded = {name: m for name, m in manifests.items() if m is not None}
    for setting in COMPARED:
        values = {
            name: str(m[setting])
            for name, m in recorded.items()
            if setting in m and contract.is_setting(m[setting])
        }
        if setting in best:
            for name, value in values.items():
                if value != best[setting]:
                    found[name].append("{} {} (best: {})".format(setting, value, best[setting]))
            continue
        counts = Counter(values.values())
        if len(counts) < 2:
            continue
        (usual, most), (_, second) = counts.most_common(2)
        for name, value in values.items():
            if most > second and value == usual:
                continue
            others = sorted(set(values.values()) - {value})
            found[name].append("{} {} (others: {})".format(setting, value, ", ".join(others)))
    return {name: "; ".join(texts) for name, texts in found.items() if texts}


def flag(summary):
    """The summary with ``hidden_settings_differ`` per cell: how its
    manifest differs from the other backends' on the same workload and
    setting (None where it does not, or where nothing ran)."""
    summary = summary.assign(**{COLUMN: None})
    if "manifest" not in summary:
        return summary
    ran = summary[summary["manifest"].notna()]
    for _, cells in ran.groupby(matrix.cell_columns("backend"), dropna=False):
        precision = cells["precision"].iloc[0] if "precision" in cells else None
        manifests = {index: parse(text) for index, text in cells["manifest"].items()}
        texts = differing(manifests, best_for(precision))
        for index, text in texts.items():
            summary.at[index, COLUMN] = text
    return summary


def pair_text(faster_runs, slower_runs, precision=None):
    """How the faster and the slower backend's manifests differ (their
    first runs'), for the significance table; None where they do not."""
    sides = {}
    for side, runs in (("faster", faster_runs), ("slower", slower_runs)):
        found = runs["manifest"].dropna() if "manifest" in runs else pd.Series(dtype=object)
        sides[side] = parse(found.iloc[0]) if len(found) else None
    texts = differing(sides, best_for(precision))
    return "; ".join("{}: {}".format(side, texts[side]) for side in sides if side in texts) or None


def table(metrics_frame):
    """Each backend's manifest as its runs recorded it: a row per backend,
    machine and distinct manifest, a column per compared setting, and the
    cells it covers."""
    rows = []
    if "manifest" not in metrics_frame:
        return pd.DataFrame(rows)
    ran = metrics_frame[metrics_frame["manifest"].notna()]
    for (machine, backend, text), runs in ran.groupby(
        ["machine", "backend", "manifest"], sort=True
    ):
        found = parse(text) or {}
        row = {"machine": machine, "backend": backend}
        row.update({key: found.get(key, NOT_RECORDED) for key in COMPARED})
        row["runs"] = len(runs)
        rows.append(row)
    return pd.DataFrame(rows, columns=["machine", "backend", *COMPARED, "runs"])
