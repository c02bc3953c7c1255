"""The step-loss verdicts of the equivalence check, in the workflow's
environment: each backend's loss curve (dlbench.run.equivalence, run in the
backend's own) set against the reference, the median across backends at
each step or a named backend, with the largest relative difference and the
first step beyond the tolerance, and its dropout draws' verdict
(dlbench.analysis.equivalence_dropout) beside it (``compare``)."""

from dlbench.analysis.equivalence_dropout import DROPOUT_ALPHA, compare_dropout
from dlbench.analysis.equivalence_reference import PINNED, no_reference
from dlbench.record.fields import Status

# float32 rounding of the same computation in another order (the config's
# equivalence_check.tolerance; config/smoke-full.yaml says how it was measured).
TOLERANCE = 2e-4

VERDICT_SAME = "same steps"
DEPARTS = "DEPARTS at step {}"
DEPARTS_IN_DROPOUT = "DEPARTS in its dropout draws ({})"


CURVE_COLUMNS = (
    "machine",
    "dataset",
    "model",
    "backend",
    "versions",
    "losses",
    "reason",
    "own_rules",
)
TABLE_COLUMNS = (
    "dataset",
    "model",
    "backend",
    "versions",
    "reference",
    "tolerance",
    "initial_loss",
    "final_loss",
    "largest_relative_difference",
    "at_step",
    "first_step_beyond_tolerance",
    "dropout_squared",
    "dropout_shift",
    "dropout_p_value",
    "dropout_verdict",
    "verdict",
    "check_settings",
    "own_rules",
)


def curves(records):
    """The check records as one row per backend: its curve, or why it has
    none (a failed run, weights not loaded)."""
    rows = []
    for record in records:
        row = {key: record.get(key) for key in CURVE_COLUMNS[:4]}
        row["versions"] = record.get("versions", PINNED)
        row["own_rules"] = "; ".join((record.get("settings") or {}).get("own_rules") or []) or None
        weights = record.get("initial_weights") or {}
        row["losses"] = None
        if record.get("status") != Status.OK:
            row["reason"] = "{}: {}".format(record.get("status"), record.get("reason") or "")
        elif not weights.get("loaded"):
            row["reason"] = "own initial weights ({})".format(weights.get("reason", "not loaded"))
        else:
            row["losses"] = record["check"]["losses"]
            row["reason"] = None
        rows.append(row)
    return rows


def relative_differences(losses, reference):
    """|loss - reference| / |reference| at each step (NaN where either is
    missing or not finite: a diverged step counts as a departure)."""
    import numpy

    losses = numpy.asarray(losses, dtype=float)
    reference = numpy.asarray(reference, dtype=float)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        found = numpy.abs(losses - reference) / numpy.abs(reference)
    return numpy.where(numpy.isfinite(found), found, numpy.inf)


def check_settings_of(record):
    """What the check changed in the workload to run it alike everywhere
    (the record's check.settings), in one line."""
    found = ((record.get("check") or {}).get("settings")) or {}
    parts = []
    for key, value in sorted(found.items()):
        if isinstance(value, dict) and "ran" in value:
            value = "{:g} (asked {})".format(value["ran"], value.get("asked"))
        parts.append("{}: {}".format(key, value))
    return "; ".join(parts) or None


def compare(records, reference="median", tolerance=TOLERANCE, alpha=None):
    """Per workload and backend: the loss before the first step, the largest
    relative difference from the reference over the steps, the first step
    where it exceeds ``tolerance``, its dropout draws' test
    (``compare_dropout`` at family-wise rate ``alpha`` per backend), and
    the verdict. The reference is the median at each step across the
    workload's backends at their pinned versions (robust to a departing
    minority when there are three or more), or the curve of the backend
    named. Every backend is held to it: the check runs under settings where
    the frameworks' documented rule differences vanish
    (dlbench.run.equivalence), so a departure is a difference in the model
    or the step; ``own_rules`` (the timed runs' rules of their own) and
    ``check_settings`` (what the check changed) are information."""
    import numpy
    import pandas as pd

    dropout = compare_dropout(records, reference, DROPOUT_ALPHA if alpha is None else alpha)
    settings = {
        (r.get("dataset"), r.get("model"), r.get("backend"), r.get("versions", PINNED)): (
            check_settings_of(r)
        )
        for r in records
    }
    table = []
    frame = pd.DataFrame(curves(records), columns=CURVE_COLUMNS)
    for (dataset, model), group in frame.groupby(["dataset", "model"], sort=True):
        compared = group[group["losses"].notna()]
        steps = {len(losses) for losses in compared["losses"]}
        # the reference from the backends' pinned versions: a version
        # variant is set against it, not part of it
        pinned = compared[compared["versions"] == PINNED]
        reference_curve, reference_name = None, reference
        if len(steps) == 1 and reference == "median" and len(pinned) >= 3:
            reference_curve = numpy.median(numpy.array(list(pinned["losses"]), float), axis=0)
            reference_name = "median of {} backends".format(len(pinned))
        elif len(steps) == 1 and reference in set(pinned["backend"]):
            (reference_curve,) = pinned.loc[pinned["backend"] == reference, "losses"]
        for row in group.itertuples():
            key = (dataset, model, row.backend, row.versions)
            drawn = dropout.get(key, {})
            found = {
                "dataset": dataset,
                "model": model,
                "backend": row.backend,
                "versions": row.versions,
                "reference": reference_name,
                "tolerance": tolerance,
                "initial_loss": None,
                "final_loss": None,
                "largest_relative_difference": None,
                "at_step": None,
                "first_step_beyond_tolerance": None,
                "dropout_squared": drawn.get("squared"),
                "dropout_shift": drawn.get("shift"),
                "dropout_p_value": drawn.get("p_value"),
                "dropout_verdict": drawn.get("verdict"),
                "check_settings": settings.get(key),
                "own_rules": row.own_rules,
            }
            if row.losses is None:
                found["verdict"] = "not compared: " + row.reason
            elif reference_curve is None:
                found["verdict"] = no_reference(reference, "curves")
            else:
                differences = relative_differences(row.losses, reference_curve)
                beyond = numpy.flatnonzero(differences > tolerance)
                largest = int(numpy.argmax(differences))
                found.update(
                    initial_loss=row.losses[0],
                    final_loss=row.losses[-1],
                    largest_relative_difference=float(differences[largest]),
                    at_step=largest,
                )
                if len(beyond):
                    first = found["first_step_beyond_tolerance"] = int(beyond[0])
                    found["verdict"] = DEPARTS.format(first)
                elif drawn.get("departs"):
                    found["verdict"] = DEPARTS_IN_DROPOUT.format(drawn["departs"])
                else:
                    found["verdict"] = VERDICT_SAME
            table.append(found)
    return pd.DataFrame(table, columns=TABLE_COLUMNS)
