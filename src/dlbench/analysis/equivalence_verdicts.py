from dlbench.record.fields import Status

"""The equivalence check's verdicts, in the workflow's environment: each
backend's loss curve (dlbench.run.equivalence, run in the backend's own) set
against the reference, the median across backends at each step or a named
backend, with the largest relative difference and the first step beyond the
tolerance (``compare``); each backend's dropout draws set against the other
backends' by a rank test (``compare_dropout``); inference runs' outputs on
the first test batch, from the same shared weights, set against each other
the same way (``compare_predictions``).
"""

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


def no_reference(reference, what):
    """The verdict where there is nothing to compare with: fewer than three
    of ``what`` for a median, or no result of the backend named."""
    if reference == "median":
        return "not compared: no reference (fewer than 3 {}, for a median)".format(what)
    return "not compared: no reference ({})".format(reference)


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


# The dropout check's test. Each backend's training-mode forward passes give
# two statistics per draw (dlbench.run.equivalence.draw_statistics). A pass
# whose first draws are all the same draws no dropout: where most backends
# draw, such a backend departs (and one that draws where most do not); that
# is exact, not a test. Among the backends that draw, draws are independent,
# so under the null (the same dropout on both backends) a two-sided
# Mann-Whitney rank test of one backend's draws against another's rejects
# at its level whatever the statistics' distribution. A pair of backends
# differs where the test of either statistic rejects at alpha / (2 n)
# (Bonferroni over the two statistics and the backend's n comparisons); a
# backend departs where it differs from more than half of the others
# (against a named reference: from it). Under the null the chance that a
# backend differs from any other is at most alpha (the union of its 2 n
# tests), so alpha bounds each backend's false alarm rate; one departing
# backend makes the others differ from one backend only, which flags none.
DROPOUT_ALPHA = 1e-3
DROPOUT_STATISTICS = ("squared", "shift")
VERDICT_SAME_DROPOUT = "same dropout"
NO_DROPOUT = "no dropout in this model"


def dropout_rows(records):
    """One row per check record: its draws' statistics, or why none."""
    rows = []
    for record in records:
        row = {key: record.get(key) for key in ("dataset", "model", "backend")}
        row["versions"] = record.get("versions", PINNED)
        drawn = (record.get("check") or {}).get("dropout_draws")
        row["draws"], row["reason"] = None, None
        if record.get("status") != Status.OK:
            row["reason"] = "{}: {}".format(record.get("status"), record.get("reason") or "")
        elif not drawn:
            row["reason"] = "no dropout draws in the record"
        elif drawn.get("reason"):
            row["reason"] = drawn["reason"]
        else:
            row["draws"] = drawn
        rows.append(row)
    return rows


def pair_p_value(drawn, other):
    """Two backends' draws: the smallest two-sided Mann-Whitney p-value of
    the two statistics, times 2 (Bonferroni over them), at most 1."""
    from scipy import stats

    found = []
    for name in DROPOUT_STATISTICS:
        a, b = drawn[name], other[name]
        if len(set(a) | set(b)) == 1:  # the same constant: nothing to rank
            found.append(1.0)
        else:
            found.append(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return min(1.0, 2 * min(found))


def _ranked(row, others, alpha):
    """The rank test of a drawing backend against the other drawing ones."""
    import numpy

    p_values = [pair_p_value(row["draws"], other["draws"]) for other in others]
    differs = sum(p < alpha / len(others) for p in p_values) if others else 0
    result = {"p_value": float(numpy.median(p_values)) if p_values else None}
    if differs * 2 > len(others):
        result["departs"] = "differs from {} of {} backends".format(differs, len(others))
        result["verdict"] = "DEPARTS ({})".format(result["departs"])
    else:
        result["verdict"] = "{} (differs from {} of {})".format(
            VERDICT_SAME_DROPOUT, differs, len(others)
        )
    return result


def compare_dropout(records, reference="median", alpha=DROPOUT_ALPHA):
    """Per workload and backend (its pinned versions and any variant), its
    dropout draws against the other backends' (the test above):
    {(dataset, model, backend, versions): {"squared", "shift" (medians over
    the draws), "p_value" (the median of its pairs' p-values), "departs"
    (why, where it departs), "verdict"}}."""
    import numpy

    found = {}
    rows = dropout_rows(records)
    workloads = sorted({(row["dataset"], row["model"]) for row in rows}, key=str)
    for dataset, model in workloads:
        group = [row for row in rows if (row["dataset"], row["model"]) == (dataset, model)]
        drawn = [row for row in group if row["draws"] is not None]
        if reference == "median":
            judges = [row for row in drawn if row["versions"] == PINNED]
        else:
            judges = [r for r in drawn if r["versions"] == PINNED and r["backend"] == reference]
        drawing = [row for row in judges if row["draws"]["stochastic"]]
        most_draw = len(drawing) * 2 >= len(judges)
        for row in group:
            key = (dataset, model, row["backend"], row["versions"])
            if row["draws"] is None:
                found[key] = {"verdict": "not compared: " + row["reason"]}
                continue
            result = {name: float(numpy.median(row["draws"][name])) for name in DROPOUT_STATISTICS}
            found[key] = result
            others = [other for other in drawing if other is not row]
            if not any(other["draws"]["stochastic"] for other in drawn):
                result["verdict"] = NO_DROPOUT
            elif reference != "median" and row["backend"] == reference:
                result["verdict"] = "{} (the reference)".format(VERDICT_SAME_DROPOUT)
            elif len(judges) - any(j is row for j in judges) < (2 if reference == "median" else 1):
                result["verdict"] = no_reference(reference, "backends' draws")
            elif row["draws"]["stochastic"] != most_draw:
                judged = len([judge for judge in judges if judge is not row])
                result["departs"] = (
                    "draws afresh where most backends give the same outputs at every draw"
                    if row["draws"]["stochastic"]
                    else "the same outputs at every draw, where {} of {} backends draw "
                    "afresh".format(len(others), judged)
                )
                result["verdict"] = "DEPARTS ({})".format(result["departs"])
            elif not row["draws"]["stochastic"]:
                result["verdict"] = "{} (the same outputs at every draw, as most backends)".format(
                    VERDICT_SAME_DROPOUT
                )
            else:
                result.update(_ranked(row, others, alpha))
    return found


CAPTION = (
    "Each backend takes {steps} optimizer steps of the workload's batch from the shared initial "
    "weights on the same batches, without dropout, and records the loss on the first "
    "{samples} test samples before the first step (step 0) and after every step. The steps run "
    "under settings that make the frameworks' documented rule differences vanish, the same on "
    "every backend (check_settings): RMSprop's epsilon at {epsilon:g}, where "
    "frameworks add it under or after the square root (Adam keeps its own: where it goes moves "
    "a curve far less than the tolerance), and the float inputs moved by a seeded jitter of "
    "+-{jitter:g} so that no pre-activation is exactly 0 and no pooling window holds tied "
    "maxima; a framework that cannot take a setting runs the same rule written in its own ops, "
    "or densified gradients (check_settings says which). A curve is compared with the "
    "reference at every step; every backend is held to it, and one whose relative difference "
    "exceeds {tolerance:g} at some step DEPARTS at that step: it computes something else (an "
    "optimizer setting, a layer, a gradient). own_rules: where the timed runs compute by their "
    "framework's own rules. Step 0 compares the forward pass alone. Dropout: from the same "
    "weights, {draws} training-mode forward passes on the first {dropout_samples} test "
    "samples, each against the inference-mode pass: dropout_squared is the median over the "
    "draws of the mean squared difference (dropout's rate sets it), dropout_shift of the mean "
    "difference at the most likely output (dropout that is not inverted moves it). A backend "
    "whose first {first_draws} draws are all the same draws no dropout and stops: where most "
    "backends draw, it DEPARTS. Each drawing backend's draws are ranked against every other "
    "drawing backend's (Mann-Whitney, both statistics, Bonferroni-corrected); a backend that "
    "differs from more than half of them DEPARTS in its "
    "dropout draws. The chance that a backend with the same dropout as the others is flagged "
    "is at most {alpha:g}. dropout_p_value: the median of its comparisons' p-values."
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
