"""Is the new release faster? Every pair of a backend's versions (the config's
``versions``: the pinned env file and its variants) on the same workload and
setting, older first, from the collected tables and the runs' environments.

The speedup is the ratio of medians (the older's steady-state epoch time, or
one sample's latency, over the newer's: 2 means the newer is twice as fast)
with the hierarchical bootstrap interval of ``abstraction.median_ratio_ci``; the
change is significant where the interval leaves out 1. Beside it: the
change of test accuracy, whether the two versions take the same optimizer
steps from the same initial weights (the equivalence check of each, the
newer's loss curve against the older's), and every installed distribution
whose version differs between the two environments.

Which version is older is read from what ran: the framework's version, then
Keras', as the runs recorded them. Each machine's versions are compared on
it; another machine's (imported records) where its hardware is the same and
no one machine ran both releases (``pairs``)."""

import json

import numpy as np
import pandas as pd
from packaging.version import InvalidVersion, Version

from dlbench.analysis import abstraction, version_verdicts
from dlbench.environments import variants
from dlbench.plan import matrix
from dlbench.record import environment_records

GROUP = matrix.cell_columns("versions")
CAPTION = (
    "Each backend's versions against each other on the same workload and setting, older first "
    "(the framework's version, then Keras', as the runs recorded them). Speed-up: the older's "
    "median steady-state epoch time (inference: one sample's latency) over the newer's, above 1 "
    "the newer is faster, [95 % hierarchical bootstrap interval], significant where it leaves "
    "out 1; acc: the change in test accuracy. Steps: whether the two take the same optimizer "
    "steps from the same initial weights (their equivalence checks, within its tolerance). "
    "The newer is faster or slower, as asv decides, where the ratio of medians passes "
    "{factor:g} (release_factor) and a two-sided Mann-Whitney U test on the two releases' "
    "samples (every steady epoch of every repeat; inference: every sample's latency) is "
    "significant at {alpha:g} (significance_level), else the same; op categories that changed: "
    "those of the op profiles whose time per step changed by more than the factor. "
    "What the two install differently: every distribution whose version differs. Where no one "
    "machine ran both versions, two machines of the same hardware (CPU model and count, GPU "
    "model, accelerator) are compared: older's machine -> newer's."
)
HARDWARE = ["cpu_model", "cpu_count", "gpu_model", "accelerator"]


def caption(factor, alpha):
    """The table's caption, with the factor and the test's level it used."""
    return CAPTION.format(factor=factor, alpha=alpha)


COLUMNS = GROUP + [
    "newer_machine",
    "hardware",
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
    "verdict",
    "factor",
    "mann_whitney_p",
    "op_changes",
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


def release_key(runs):
    """What orders a release's runs among others: the framework's version,
    then Keras' (parsed, then as text)."""
    framework, keras = _ran(runs)
    return _version(framework), _version(keras), str(framework), str(keras)


def order(runs):
    """One machine's versions of a group, oldest first, by the framework's
    version, then Keras' (a Keras variant leaves the framework as it was)."""
    found = [(release_key(chosen), version) for version, chosen in runs.groupby("versions")]
    return [version for _, version in sorted(found)]


def pairs(runs):
    """((machine, version), (machine, version)) of every two releases a
    group compares, older first: each machine's consecutive versions; then
    two consecutive releases (by what ran) that no one machine ran both of,
    across every two machines of the same hardware that ran one each."""
    compared = []
    ran_by = {}
    for machine, on_machine in runs.groupby("machine", sort=True):
        ordered = order(on_machine)
        compared += [((machine, a), (machine, b)) for a, b in zip(ordered, ordered[1:])]
        for version in ordered:
            ran = release_key(on_machine[on_machine["versions"] == version])
            ran_by.setdefault(ran, {}).setdefault(machine, version)
    ran = sorted(ran_by)
    for older, newer in zip(ran, ran[1:]):
        if set(ran_by[older]) & set(ran_by[newer]):
            continue
        compared += [
            ((first, ran_by[older][first]), (second, ran_by[newer][second]))
            for first in sorted(ran_by[older])
            for second in sorted(ran_by[newer])
        ]
    return compared


def release_label(runs):
    """``framework version, keras version`` as the runs recorded them."""
    framework, keras = _ran(runs)
    parts = ["{} {}".format(runs["framework"].iloc[0], framework)] if framework else []
    if keras and not pd.isna(keras):
        parts.append("keras {}".format(keras))
    return ", ".join(parts) or runs["versions"].iloc[0]


class NotKnown:
    """What an environment installed where its marker could not be read or
    is corrupt: not known, and why (never "nothing installed")."""

    def __init__(self, reason):
        self.reason = reason

    def __eq__(self, other):
        return isinstance(other, NotKnown) and other.reason == self.reason

    def __repr__(self):
        return "NotKnown({!r})".format(self.reason)


def installed(marker):
    """{distribution: version} an environment holds, from its marker: a
    venv's ready.json (``pip freeze``) or an existing interpreter's check;
    ``NotKnown`` with the reason where the marker cannot be read or is not
    a marker."""
    if not marker:
        return {}
    try:
        with open(marker) as handle:
            found = json.load(handle)
    except OSError as error:
        return NotKnown("the marker {} could not be read ({})".format(marker, error))
    except ValueError as error:
        return NotKnown("the marker {} is corrupt: not JSON ({})".format(marker, error))
    if not isinstance(found, dict):
        return NotKnown(
            "the marker {} is corrupt: a JSON {}, not an object".format(
                marker, type(found).__name__
            )
        )
    try:
        return environment_records.installed_distributions(found)
    except (AttributeError, TypeError) as error:  # its lists and mappings of other types
        return NotKnown("the marker {} is corrupt ({})".format(marker, error))


def installed_by_environment(machine, markers, imported=()):
    """{(machine, environment): {distribution: version}}: this machine's
    environments from their markers, another machine's from what its run
    records say they ran with."""
    found = {(machine, environment): installed(marker) for environment, marker in markers.items()}
    for record in imported:
        held = (record.get("environment_check") or {}).get("installed")
        if held:
            found.setdefault((record["machine"], record.get("environment_name")), held)
    return found


def installed_differences(older, newer):
    """``name old -> new`` of every distribution whose version differs (or
    that only one environment holds), sorted; None where either is unknown,
    and why where a marker could not be read (``NotKnown``)."""
    unreadable = [held.reason for held in (older, newer) if isinstance(held, NotKnown)]
    if unreadable:
        return "not known: " + "; ".join(unreadable)
    if not older or not newer:
        return None
    names = sorted(set(older) | set(newer))
    return "; ".join(
        "{} {} -> {}".format(name, older.get(name, "absent"), newer.get(name, "absent"))
        for name in names
        if older.get(name) != newer.get(name)
    )


def _check_curves(checks):
    """{(machine, dataset, model, backend, version): losses} of the
    equivalence checks that ran from the shared weights."""
    curves = {}
    for record in checks:
        weights = record.get("initial_weights") or {}
        if record.get("status") == "ok" and weights.get("loaded"):
            key = (record.get("machine"), record["dataset"], record["model"], record["backend"])
            curves[key + (record.get("versions", variants.PINNED),)] = record["check"]["losses"]
    return curves


def _same_steps(curves, older, newer, tolerance):
    first, second = curves.get(older), curves.get(newer)
    if first is None or second is None:
        return None, None
    first, second = np.asarray(first, float), np.asarray(second, float)
    if first.shape != second.shape:
        return False, float("inf")
    with np.errstate(divide="ignore", invalid="ignore"):
        differences = np.abs(second - first) / np.abs(first)
    largest = float(np.max(np.where(np.isfinite(differences), differences, np.inf)))
    return bool(largest <= tolerance), largest


def hardware(metrics):
    """What two machines must share for their versions to be compared: the
    CPU's model and count, the GPUs' model and the accelerator, as the runs
    recorded them (one text per run)."""
    recorded = metrics.reindex(columns=HARDWARE)
    texts = [" | ".join("" if pd.isna(v) else str(v) for v in row) for row in recorded.values]
    return pd.Series(texts, index=metrics.index, dtype=object)


def compare(
    metrics,
    epochs,
    latencies,
    checks=(),
    installed=None,
    tolerance=2.0e-4,
    level=0.95,
    draws=2000,
    factor=1.1,
    alpha=0.05,
    ops=None,
):
    """One row per pair of consecutive releases of a backend on a workload
    and setting, on one machine or on two of the same hardware (``pairs``).
    ``checks``: the equivalence check records (their versions' curves are
    compared at ``tolerance``); ``installed``: {(machine, environment):
    {distribution: version}} (``installed_by_environment``); the verdict
    and the op categories that changed (``ops``: the ops table) at
    ``factor`` and ``alpha`` (dlbench.analysis.version_verdicts)."""
    installed = installed or {}
    ok, values = measured_runs(metrics, epochs, latencies)
    curves = _check_curves(checks)
    setting = matrix.cell_columns("machine", "versions")
    rows = []
    for group, runs in ok.groupby(setting + ["hardware"], sort=True):
        if len(runs[["machine", "versions"]].drop_duplicates()) < 2:
            continue
        task = runs["task"].iloc[0]
        cell = dict(zip(setting, group))
        measured = values[task].merge(pd.DataFrame([cell]))
        for (first, older), (second, newer) in pairs(runs):
            on_older = runs[(runs["machine"] == first) & (runs["versions"] == older)]
            on_newer = runs[(runs["machine"] == second) & (runs["versions"] == newer)]
            row = _row(
                cell,
                task,
                (first, older, on_older),
                (second, newer, on_newer),
                measured,
                level,
                draws,
            )
            if row is None:
                continue
            row["verdict"], _, row["mann_whitney_p"] = version_verdicts.verdict(
                per_repeat(measured, first, older),
                per_repeat(measured, second, newer),
                factor,
                alpha,
            )
            row["factor"] = factor
            row["op_changes"] = version_verdicts.op_changes(
                _ops_row(ops, dict(cell, machine=first, versions=older)),
                _ops_row(ops, dict(cell, machine=second, versions=newer)),
                factor,
            )
            workload = (cell["dataset"], cell["model"], cell["backend"])
            row["same_steps"], row["largest_step_difference"] = _same_steps(
                curves,
                (first,) + workload + (older,),
                (second,) + workload + (newer,),
                tolerance,
            )
            row["installed_differences"] = installed_differences(
                installed.get((first, _environment(on_older))),
                installed.get((second, _environment(on_newer))),
            )
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(cell, task, older, newer, measured, level, draws):
    (first, older, older_runs), (second, newer, newer_runs) = older, newer
    before = per_repeat(measured, first, older)
    after = per_repeat(measured, second, newer)
    if not before or not after:
        return None
    speedup, low, high = abstraction.median_ratio_ci(before, after, level, draws)
    row = {
        **cell,
        "machine": first,
        "newer_machine": second,
        "hardware": older_runs["hardware"].iloc[0],
        "accelerator": older_runs["accelerator"].iloc[0] if "accelerator" in older_runs else None,
        "task": task,
        "older": older,
        "newer": newer,
        "older_versions": release_label(older_runs),
        "newer_versions": release_label(newer_runs),
        "measure": abstraction.MEASURES[task][0],
        "older_median": float(np.median(np.concatenate(before))),
        "newer_median": float(np.median(np.concatenate(after))),
        "speedup": speedup,
        "speedup_ci_low": low,
        "speedup_ci_high": high,
        "ci_level": level,
        "significant": bool(low > 1 or high < 1),
        "repeats": min(len(before), len(after)),
    }
    if task == "train":
        row.update(
            older_test_accuracy=older_runs["test_accuracy"].median(),
            newer_test_accuracy=newer_runs["test_accuracy"].median(),
        )
        row["accuracy_change"] = row["newer_test_accuracy"] - row["older_test_accuracy"]
    return row


def _ops_row(ops, cell):
    """The ops table's row of one cell (every dimension and the versions), or None."""
    if ops is None or ops.empty:
        return None
    keys = [key for key in cell if key in ops.columns]
    chosen = ops[(ops[keys].astype(str) == pd.Series(cell)[keys].astype(str)).all(axis=1)]
    return chosen.iloc[0] if len(chosen) else None


def measured_runs(metrics, epochs, latencies):
    """(the runs that ended ok, each with its ``hardware``; {task: their
    samples}: every steady epoch of a training run, every call's latency of
    an inference run, one row each with its run's cell and repeat)."""
    ok = metrics[metrics["status"] == "ok"].assign(hardware=lambda frame: hardware(frame))
    keys = GROUP + ["versions", "repeat"]
    values = {
        "train": abstraction.steady_epochs(epochs).merge(ok[keys]),
        "infer": abstraction.latency_calls(latencies).merge(ok[keys]),
    }
    return ok, values


def per_repeat(frame, machine, version):
    """The samples ``machine`` took at ``version``: one array per repeat."""
    chosen = frame[(frame["machine"] == machine) & (frame["versions"] == version)]
    return [g["value"].to_numpy(float) for _, g in chosen.groupby("repeat", sort=True)]


def _environment(runs):
    return runs["environment"].iloc[0] if "environment" in runs else None


def _verdict_text(row):
    if pd.isna(row.get("verdict")):
        return "not judged"
    return "{} (p {:.2g})".format(row["verdict"], row["mann_whitney_p"])


def _speed_text(row):
    verdict = "significant" if row["significant"] else "not significant"
    text = "{:.2f}x [{:.2f}, {:.2f}], {}".format(
        row["speedup"], row["speedup_ci_low"], row["speedup_ci_high"], verdict
    )
    if not pd.isna(row.get("accuracy_change")):
        text += ", acc {:+.3f}".format(row["accuracy_change"])
    return text


def machines(found):
    """Where each pair ran: its machine, or ``older -> newer`` across two
    machines of the same hardware."""
    newer = found["newer_machine"].fillna(found["machine"])
    return found["machine"].where(newer == found["machine"], found["machine"] + " -> " + newer)


def shown_dimensions(found):
    """The settings a table or plot of pairs names: ``matrix.shown_dimensions``,
    and the machines wherever a pair spans two."""
    setting = [c for c in matrix.shown_dimensions(found.assign(versions="")) if c != "versions"]
    if "machine" not in setting and found["machine"].str.contains(" -> ").any():
        setting.insert(0, "machine")
    return setting


def table(found):
    """The report's layout: a row per workload, setting, backend and pair of
    versions: the speed-up of the newer, whether the steps are the same,
    what the environments install differently."""
    if found.empty:
        return pd.DataFrame(columns=["workload", "backend", "older", "newer"])
    found = found.assign(machine=machines(found))
    setting = shown_dimensions(found)
    same = {True: "same steps", False: "different steps", None: "not checked"}
    shown = found.assign(
        workload=found["dataset"] + " / " + found["model"],
        verdict=[_verdict_text(row) for row in found.to_dict("records")],
        speed=[_speed_text(row) for row in found.to_dict("records")],
        steps=[same[None if pd.isna(value) else bool(value)] for value in found["same_steps"]],
        op_changes=found["op_changes"].fillna("no op profiles"),
        installed_differences=found["installed_differences"].fillna("not known"),
    )
    columns = ["workload"] + setting + ["backend", "older_versions", "newer_versions"]
    columns += ["verdict", "speed", "steps", "op_changes", "installed_differences"]
    return shown[columns].rename(
        columns={
            "older_versions": "older",
            "newer_versions": "newer",
            "verdict": "the newer is",
            "speed": "newer's speed-up",
            "op_changes": "op categories that changed",
            "installed_differences": "what the two install differently",
        }
    )
