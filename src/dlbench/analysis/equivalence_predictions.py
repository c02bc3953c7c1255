"""The predictions' verdicts: inference runs' outputs on the first test
batch, from the same shared weights, set against the median of the runs'
or a named backend's (``compare_predictions``)."""

from dlbench.analysis.equivalence_reference import no_reference
from dlbench.record.fields import Status

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
        if record.get("status") != Status.OK:
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
