"""The equivalence check's verdicts, in the workflow's environment: each
backend's loss curve (dlbench.run.equivalence, run in the backend's own) set
against the reference, the median across backends at each step or a named
backend, with the largest relative difference and the first step beyond the
tolerance (``compare``); inference runs' outputs on the first test batch,
from the same shared weights, set against each other the same way
(``compare_predictions``).
"""

from dlbench.run.equivalence import TOLERANCE

VERDICT_SAME = "same steps"
DEPARTS = "DEPARTS at step {}"
EXPECTED_DEPARTURE = "departs at step {}, as its framework's own rules do (expected)"


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
PINNED = "pinned"  # dlbench.environments.variants.PINNED: the env file's own versions
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
    "verdict",
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
        if record.get("status") != "ok":
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


def no_reference(reference, what):
    """The verdict where there is nothing to compare with: fewer than three
    of ``what`` for a median, or no result of the backend named."""
    if reference == "median":
        return "not compared: no reference (fewer than 3 {}, for a median)".format(what)
    return "not compared: no reference ({})".format(reference)


def compare(records, reference="median", tolerance=TOLERANCE):
    """Per workload and backend: the loss before the first step, the largest
    relative difference from the reference over the steps, the first step
    where it exceeds ``tolerance``, and the verdict. The reference is the
    median at each step across the workload's backends that compute as
    Keras 3 does (robust to a departing minority when there are three or
    more), or the curve of the backend named. A backend whose framework has
    rules of its own for this model (its record's ``settings.own_rules``:
    an optimizer's update, a gradient) is expected to depart, and its
    verdict says so."""
    import numpy
    import pandas as pd

    table = []
    frame = pd.DataFrame(curves(records), columns=CURVE_COLUMNS)
    for (dataset, model), group in frame.groupby(["dataset", "model"], sort=True):
        compared = group[group["losses"].notna()]
        steps = {len(losses) for losses in compared["losses"]}
        # the reference from the backends' pinned versions: a version
        # variant is set against it, not part of it
        pinned = compared[compared["versions"] == PINNED]
        keras_rule = pinned[pinned["own_rules"].isna()]
        reference_curve, reference_name = None, reference
        if len(steps) == 1 and reference == "median" and len(keras_rule) >= 3:
            reference_curve = numpy.median(numpy.array(list(keras_rule["losses"]), float), axis=0)
            reference_name = "median of {} backends".format(len(keras_rule))
        elif len(steps) == 1 and reference in set(pinned["backend"]):
            (reference_curve,) = pinned.loc[pinned["backend"] == reference, "losses"]
        for row in group.itertuples():
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
                "own_rules": row.own_rules,
            }
            if row.losses is None:
                found["verdict"] = "not compared: " + row.reason
            elif reference_curve is None:
                found["verdict"] = no_reference(reference, "curves computed as Keras 3 does")
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
                if not len(beyond):
                    found["verdict"] = VERDICT_SAME
                else:
                    first = found["first_step_beyond_tolerance"] = int(beyond[0])
                    expected = isinstance(row.own_rules, str)
                    found["verdict"] = (EXPECTED_DEPARTURE if expected else DEPARTS).format(first)
            table.append(found)
    return pd.DataFrame(table, columns=TABLE_COLUMNS)


CAPTION = (
    "Each backend takes {steps} optimizer steps of the workload's batch from the shared initial "
    "weights on the same batches, without dropout, and records the loss on the first "
    "{samples} test samples before the first step (step 0) and after every step. A curve is "
    "compared with the reference at every step; a backend whose relative difference exceeds "
    "{tolerance:g} at some step DEPARTS at that step: it computes something else (an optimizer "
    "setting, a layer, an epsilon). The reference leaves out the backends whose framework has "
    "rules of its own (own_rules: an optimizer's update, a gradient), whose departures are "
    "expected. Step 0 compares the forward pass alone."
)


# Predictions of inference runs from the same weights.

# float32 outputs of the same network computed in another order, measured
# on the smoke: LeNet's probabilities (trained on the digits) on all 14
# backends within 6.6e-7 of the largest probability from their median,
# ResNet-50's features on the 4 Keras 3 backends within 3.6e-7 of the largest
# feature; LeNet's dense rows left in Keras' flattening order on native
# torch: 0.98. 1e-4 leaves the rounding a margin of 150.
PREDICTION_TOLERANCE = 1e-4
VERDICT_SAME_PREDICTIONS = "same predictions"
PREDICTIONS_DEPART = "DEPARTS (outputs {:.1e} of the largest apart)"
# Dimensions that change what a network computes are compared apart; where
# it runs (the machine, devices, threads) is not: its outputs must agree.
PLACE = ("machine", "devices", "threads")
PREDICTION_COLUMNS = (
    "dataset",
    "model",
    "repeat",
    "backend",
    "machine",
    "devices",
    "threads",
    "precision",
    "compile",
    "weights",
    "reference",
    "tolerance",
    "samples",
    "largest_difference",
    "classes_differing",
    "classes_sha256",
    "verdict",
)


def _weights_of(record):
    weights = record.get("initial_weights") or {}
    if not weights:
        return "own", "no shared weights (initial_weights: own)"
    if not weights.get("loaded"):
        return "own", "own weights ({})".format(weights.get("reason", "not loaded"))
    trained = weights.get("trained")
    if trained:
        return "trained ({}, test accuracy {:.3f})".format(
            trained.get("backend"), trained.get("test_accuracy") or float("nan")
        ), None
    return "shared draw", None


def prediction_rows(records):
    """One row per inference record: its cell, its outputs or why none."""
    from dlbench.plan import matrix

    rows = []
    for record in records:
        if record.get("task") not in ("infer", None):  # None: a record that did not parse
            continue
        row = {key: record.get(key) for key in ("dataset", "model", "repeat", "backend")}
        row.update({key: record.get(key) for key in PLACE})
        for name in matrix.DIMENSION_NAMES:
            row.setdefault(name, record.get(name))
        row["weights"], reason = _weights_of(record)
        found = record.get("predictions")
        row["outputs"] = row["norms"] = row["classes_sha256"] = row["classifier"] = None
        if record.get("status") != "ok":
            reason = "{}: {}".format(record.get("status"), record.get("reason") or "")
        elif reason is None and not found:
            reason = "no predictions in the record"
        if reason is None:
            row["outputs"] = found["outputs"]
            row["norms"] = found["norms"]
            row["classes_sha256"] = found.get("classes_sha256")
            row["classifier"] = "classes" in found
        row["reason"] = reason
        rows.append(row)
    return rows


def output_difference(outputs, reference):
    """The largest |output - reference| over the samples' kept outputs and
    their norms, over the largest |reference| of each: scale-free for
    probabilities and features alike."""
    import numpy

    outputs, reference = numpy.asarray(outputs, float), numpy.asarray(reference, float)
    if outputs.shape != reference.shape:
        return float("inf")
    scale = numpy.max(numpy.abs(reference))
    found = numpy.max(numpy.abs(outputs - reference)) / scale if scale else 0.0
    return float(found) if numpy.isfinite(found) else float("inf")


def compare_predictions(records, reference="median", tolerance=PREDICTION_TOLERANCE):
    """Per inference workload and repeat (the same weights), every run's
    outputs on the first test batch against the reference: the median
    output across the runs that loaded the shared weights (three or more),
    or the outputs of the backend named. The largest difference over the
    largest reference output, how many samples' predicted classes differ,
    and the verdict."""
    import numpy
    import pandas as pd

    from dlbench.plan import matrix

    frame = pd.DataFrame(prediction_rows(records))
    if frame.empty:
        return pd.DataFrame(columns=PREDICTION_COLUMNS)
    computing = [name for name in matrix.DIMENSION_NAMES if name not in PLACE]
    table = []
    keys = ["dataset", "model", "repeat"] + computing
    for _, group in frame.groupby(keys, sort=True, dropna=False):
        loaded = group[group["outputs"].notna()]
        shapes = {numpy.shape(outputs) for outputs in loaded["outputs"]}
        reference_outputs = reference_norms = None
        reference_name = reference
        if len(shapes) == 1 and reference == "median" and len(loaded) >= 3:
            reference_outputs = numpy.median(numpy.array(list(loaded["outputs"]), float), axis=0)
            reference_norms = numpy.median(numpy.array(list(loaded["norms"]), float), axis=0)
            reference_name = "median of {} runs".format(len(loaded))
        elif len(shapes) == 1 and reference in set(loaded["backend"]):
            chosen = loaded[loaded["backend"] == reference].iloc[0]
            reference_outputs = numpy.asarray(chosen["outputs"], float)
            reference_norms = numpy.asarray(chosen["norms"], float)
        for row in group.to_dict("records"):
            found = {key: row.get(key) for key in PREDICTION_COLUMNS[:10]}
            found.update(
                reference=reference_name,
                tolerance=tolerance,
                samples=None,
                largest_difference=None,
                classes_differing=None,
                classes_sha256=row["classes_sha256"] if row["classifier"] is True else None,
            )
            if isinstance(row["reason"], str):
                found["verdict"] = "not compared: " + row["reason"]
            elif reference_outputs is None:
                found["verdict"] = no_reference(reference, "runs with the shared weights")
            else:
                outputs = numpy.asarray(row["outputs"], float)
                difference = max(
                    output_difference(outputs, reference_outputs),
                    output_difference(row["norms"], reference_norms),
                )
                found.update(samples=len(outputs), largest_difference=difference)
                if row["classifier"] is True:
                    found["classes_differing"] = int(
                        numpy.sum(outputs.argmax(axis=1) != reference_outputs.argmax(axis=1))
                    )
                found["verdict"] = (
                    VERDICT_SAME_PREDICTIONS
                    if difference <= tolerance
                    else PREDICTIONS_DEPART.format(difference)
                )
            table.append(found)
    return pd.DataFrame(table, columns=PREDICTION_COLUMNS)


PREDICTIONS_CAPTION = (
    "Predictions from the same weights: every inference run loads the workload's shared "
    "weights (trained once by the workflow on keras-torch where the workload names "
    "trained_weights, else the shared initial draw) and keeps its outputs on the first test "
    "batch, off the clock. Each run's outputs are compared with the reference ({reference}) of "
    "its workload and repeat, on every machine, device count and thread count: the largest "
    "difference over the largest reference output; beyond {tolerance:g} (float32 computed in "
    "another order stays far below) the run DEPARTS. classes_differing: the samples whose "
    "predicted class is not the reference's; classes_sha256: a checksum of the predicted "
    "classes. A run that could not load the weights is not compared, and says why."
)
