"""Is the new release faster? Every pair of a backend's versions (the config's
``versions``: the pinned env file and its variants) on the same workload and
setting, older first, from the collected tables and the runs' environments.

Speed is the ratio of medians (the older's steady-state epoch time, or one
sample's latency, over the newer's: 2 means the newer is twice as fast) with
the hierarchical bootstrap interval of ``dlbench.analysis.abstraction``; the
change is significant where the interval leaves out 1. Beside it: the
change of test accuracy, whether the two versions take the same optimizer
steps from the same initial weights (the equivalence check of each, the
newer's loss curve against the older's), and every installed distribution
whose version differs between the two environments.

Which version is older is read from what ran: the framework's version, then
Keras', as the runs recorded them."""

import json

import numpy as np
import pandas as pd
from packaging.version import InvalidVersion, Version

from dlbench.analysis import abstraction
from dlbench.environments import variants
from dlbench.plan import matrix

GROUP = matrix.cell_columns("versions")
CAPTION = (
    "Each backend's versions against each other on the same workload and setting, older first "
    "(the framework's version, then Keras', as the runs recorded them). Speed-up: the older's "
    "median steady-state epoch time (inference: one sample's latency) over the newer's, above 1 "
    "the newer is faster, [95 % hierarchical bootstrap interval], significant where it leaves "
    "out 1; acc: the change in test accuracy. Steps: whether the two take the same optimizer "
    "steps from the same initial weights (their equivalence checks, within its tolerance). "
    "What the two install differently: every distribution whose version differs."
)
COLUMNS = GROUP + [
    "accelerator",
    "task",
    "older",
    "newer",
    "older_versions",
    "newer_versions",
    "measure",
    "older_median",
    "newer_median",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "ci_level",
    "significant",
    "repeats",
    "older_test_accuracy",
    "newer_test_accuracy",
    "accuracy_change",
    "same_steps",
    "largest_step_difference",
    "installed_differences",
]


def _version(text):
    try:
        return Version(str(text))
    except InvalidVersion:
        return Version("0")


def _ran(runs):
    """What a version's runs recorded: framework and Keras versions."""
    first = runs.iloc[0]
    framework = first.get("framework_version")
    keras = first.get("keras_version")
    return framework, keras


def order(runs):
    """A group's versions, oldest first, by the framework's version, then
    Keras' (a Keras variant leaves the framework as it was)."""
    found = []
    for version, chosen in runs.groupby("versions", sort=True):
        framework, keras = _ran(chosen)
        found.append(((_version(framework), _version(keras), version), version))
    return [version for _, version in sorted(found)]


def _label(runs, version):
    framework, keras = _ran(runs[runs["versions"] == version])
    parts = ["{} {}".format(runs["framework"].iloc[0], framework)] if framework else []
    if keras and not pd.isna(keras):
        parts.append("keras {}".format(keras))
    return ", ".join(parts) or version


def installed(marker):
    """{distribution: version} an environment holds, from its venv's
    ready.json (``pip freeze``) or an existing interpreter's check."""
    if not marker:
        return {}
    try:
        with open(marker) as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        return {}
    if found.get("installed"):
        return {name.lower(): str(version) for name, version in found["installed"].items()}
    held = {}
    for line in found.get("pip_freeze") or []:
        name, _, version = line.partition("==")
        if version:
            held[name.lower().replace("_", "-")] = version
    return held


def installed_differences(older, newer):
    """``name old -> new`` of every distribution whose version differs (or
    that only one environment holds), sorted."""
    names = sorted(set(older) | set(newer))
    return "; ".join(
        "{} {} -> {}".format(name, older.get(name, "absent"), newer.get(name, "absent"))
        for name in names
        if older.get(name) != newer.get(name)
    )


def _check_curves(checks):
    """{(dataset, model, backend, version): losses} of the equivalence
    checks that ran from the shared weights."""
    curves = {}
    for record in checks:
        weights = record.get("initial_weights") or {}
        if record.get("status") == "ok" and weights.get("loaded"):
            key = (record["dataset"], record["model"], record["backend"])
            curves[key + (record.get("versions", variants.PINNED),)] = record["check"]["losses"]
    return curves


def _same_steps(curves, key, older, newer, tolerance):
    first, second = curves.get(key + (older,)), curves.get(key + (newer,))
    if first is None or second is None:
        return None, None
    first, second = np.asarray(first, float), np.asarray(second, float)
    if first.shape != second.shape:
        return False, float("inf")
    with np.errstate(divide="ignore", invalid="ignore"):
        differences = np.abs(second - first) / np.abs(first)
    largest = float(np.max(np.where(np.isfinite(differences), differences, np.inf)))
    return bool(largest <= tolerance), largest


def compare(
    metrics,
    epochs,
    latencies,
    checks=(),
    environments=None,
    tolerance=2.0e-4,
    level=0.95,
    draws=2000,
):
    """One row per pair of consecutive versions of a backend on a workload
    and setting. ``checks``: the equivalence check records (their versions'
    curves are compared at ``tolerance``); ``environments``: {environment:
    its marker file}, for what the two install."""
    environments = environments or {}
    ok = metrics[metrics["status"] == "ok"]
    keys = GROUP + ["versions", "repeat"]
    values = {
        "train": abstraction.steady_epochs(epochs).merge(ok[keys]),
        "infer": abstraction.latency_calls(latencies).merge(ok[keys]),
    }
    curves = _check_curves(checks)
    rows = []
    for group, runs in ok.groupby(GROUP, sort=True):
        if runs["versions"].nunique() < 2:
            continue
        task = runs["task"].iloc[0]
        cell = dict(zip(GROUP, group))
        measured = values[task].merge(pd.DataFrame([cell]))
        ordered = order(runs)
        for older, newer in zip(ordered, ordered[1:]):
            before = _per_repeat(measured, older)
            after = _per_repeat(measured, newer)
            if not before or not after:
                continue
            speedup, low, high = abstraction.ratio_ci(before, after, level, draws)
            same, largest = _same_steps(
                curves, (cell["dataset"], cell["model"], cell["backend"]), older, newer, tolerance
            )
            row = {
                **cell,
                "accelerator": runs["accelerator"].iloc[0] if "accelerator" in runs else None,
                "task": task,
                "older": older,
                "newer": newer,
                "older_versions": _label(runs, older),
                "newer_versions": _label(runs, newer),
                "measure": abstraction.MEASURES[task][0],
                "older_median": float(np.median(np.concatenate(before))),
                "newer_median": float(np.median(np.concatenate(after))),
                "speedup": speedup,
                "speedup_ci_low": low,
                "speedup_ci_high": high,
                "ci_level": level,
                "significant": bool(low > 1 or high < 1),
                "repeats": min(len(before), len(after)),
                "same_steps": same,
                "largest_step_difference": largest,
                "installed_differences": installed_differences(
                    installed(environments.get(_environment(runs, older))),
                    installed(environments.get(_environment(runs, newer))),
                ),
            }
            if task == "train":
                accuracy = {
                    version: runs.loc[runs["versions"] == version, "test_accuracy"].median()
                    for version in (older, newer)
                }
                row.update(
                    older_test_accuracy=accuracy[older],
                    newer_test_accuracy=accuracy[newer],
                    accuracy_change=accuracy[newer] - accuracy[older],
                )
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _per_repeat(frame, version):
    chosen = frame[frame["versions"] == version]
    return [g["value"].to_numpy(float) for _, g in chosen.groupby("repeat", sort=True)]


def _environment(runs, version):
    chosen = runs[runs["versions"] == version]
    return chosen["environment"].iloc[0] if "environment" in chosen else None


def _speed_text(row):
    verdict = "significant" if row["significant"] else "not significant"
    text = "{:.2f}x [{:.2f}, {:.2f}], {}".format(
        row["speedup"], row["speedup_ci_low"], row["speedup_ci_high"], verdict
    )
    if not pd.isna(row.get("accuracy_change")):
        text += ", acc {:+.3f}".format(row["accuracy_change"])
    return text


def table(found):
    """The report's layout: a row per workload, setting, backend and pair of
    versions: the speed-up of the newer, whether the steps are the same,
    what the environments install differently."""
    if found.empty:
        return pd.DataFrame(columns=["workload", "backend", "older", "newer"])
    setting = [c for c in matrix.shown_settings(found.assign(versions="")) if c != "versions"]
    same = {True: "same steps", False: "different steps", None: "not checked"}
    shown = found.assign(
        workload=found["dataset"] + " / " + found["model"],
        speed=[_speed_text(row) for row in found.to_dict("records")],
        steps=[same[None if pd.isna(value) else bool(value)] for value in found["same_steps"]],
    )
    columns = ["workload"] + setting + ["backend", "older_versions", "newer_versions"]
    columns += ["speed", "steps", "installed_differences"]
    return shown[columns].rename(
        columns={
            "older_versions": "older",
            "newer_versions": "newer",
            "speed": "newer's speed-up",
            "installed_differences": "what the two install differently",
        }
    )
