"""The report's front page: the answer before the method.

Rule ``front_page`` writes ``results/report/front_page.rst`` beside
the heat-map, and the report's description (``workflow/report/workflow.rst``)
includes it first: the relative-speed heat-map (embedded as a data URI, since
the description is one HTML fragment), the pairs of backends that differ
significantly (``results/tables/significance.csv``), and the cells that have
no figure with the reason why (``results/summary.csv``: failed, timed out,
unavailable, invalid, partly run, or not in the matrix by design).

The text is reStructuredText for that description only: it names report
results (``relative_speed.png``, ``significance.html``, ``summary.csv``) as
links that Snakemake's report defines.
"""

import base64
import re

import pandas as pd

from dlbench.analysis import collect, stats
from dlbench.plan import matrix
from dlbench.record.fields import CellStatus

# Cells without a figure, in the order the list shows them: what went wrong
# first, what the matrix leaves out by design last.
NOT_RUN_ORDER = (
    CellStatus.FAILED,
    CellStatus.TIMEOUT,
    CellStatus.INVALID,
    CellStatus.UNAVAILABLE,
    CellStatus.PARTIAL,
    CellStatus.NOT_APPLICABLE,
)
NOT_RUN_LABEL = {
    CellStatus.FAILED: "failed",
    CellStatus.TIMEOUT: "timed out",
    CellStatus.INVALID: "invalid record",
    CellStatus.UNAVAILABLE: "environment unavailable",
    CellStatus.PARTIAL: "some repeats failed",
    CellStatus.NOT_APPLICABLE: "not in the matrix",
}
# The front page stays short: the tables hold the rest.
MOST_PAIRS = 12
MOST_GROUPS = 15
MOST_WORKLOADS = 6
LONGEST_REASON = 220
# The heading style of the front page's sections, which workflow.rst shares.
RULE = "="
URI_LINE = 96


def significant_pairs(pairs):
    """The pairs that differ significantly, the largest ratio first within
    each workload and setting."""
    if not len(pairs):
        return pairs
    found = pairs[pairs["significant"].astype("boolean").fillna(False).astype(bool)]
    return found.sort_values(
        stats.GROUP + ["ratio"], ascending=[True] * len(stats.GROUP) + [False], ignore_index=True
    )


def not_run_groups(summary):
    """The cells without a figure of their own, one group per status and
    reason (a reason that names the cell's model or dataset counts as the same
    reason across workloads, the names shown as ‹model› and ‹dataset›):
    ``status``, ``reason``, ``backends``, ``cells`` (how many), ``workloads``
    ("dataset / model", each once) and ``setting``: what the group's cells
    share of the settings that vary in the summary ("1 GPU, compile=eager"),
    empty where they share none; what went wrong first, the most cells first
    within a status."""
    cells = summary[summary["status"] != CellStatus.OK]
    if not len(cells):
        return []
    varying = [c for c in matrix.shown_dimensions(summary) if summary[c].nunique() > 1]
    cells = cells.assign(
        where=workload_labels(cells, with_setting=False),
        pattern=[_reason_pattern(row) for _, row in cells.iterrows()],
        order=cells["status"].map(_status_order),
    )
    groups = []
    for (_, status, _), group in cells.groupby(["order", "status", "pattern"], sort=True):
        reasons = {" ".join(str(_reason(row)).split()) for _, row in group.iterrows()}
        shared = [column for column in varying if group[column].nunique() == 1]
        groups.append(
            {
                "status": status,
                "reason": reasons.pop() if len(reasons) == 1 else group["pattern"].iloc[0],
                "backends": sorted(group["backend"].unique()),
                "cells": len(group),
                "workloads": sorted(group["where"].unique()),
                "setting": collect.labels(group.head(1), shared).iloc[0] if shared else "",
            }
        )
    return sorted(groups, key=lambda g: (_status_order(g["status"]), -g["cells"], g["reason"]))


def _status_order(status):
    return NOT_RUN_ORDER.index(status) if status in NOT_RUN_ORDER else len(NOT_RUN_ORDER)


def _reason(row):
    text = row["error"] if isinstance(row["error"], str) and row["error"].strip() else None
    if row["status"] == CellStatus.PARTIAL:
        return "{} of {} repeats ok; {}".format(
            _count(row["runs_ok"]), _count(row["runs"]), text or "no reason recorded"
        )
    return text or "no reason recorded"


def _count(value):
    return int(value) if pd.notna(value) else "?"


def _reason_pattern(row):
    """The reason with the cell's own names taken out, so that "chainer has no
    cnn yet" and "chainer has no mlp yet" are one reason."""
    text = " ".join(str(_reason(row)).split())
    for name, placeholder in ((row["model"], "‹model›"), (row["dataset"], "‹dataset›")):
        text = re.sub(r"(?<![\w-]){}(?![\w-])".format(re.escape(str(name))), placeholder, text)
    if row["status"] == CellStatus.PARTIAL:  # the counts differ from cell to cell
        text = re.sub(r"^\d+ of \d+ repeats ok; ", "some repeats ok; ", text)
    return text


def workload_labels(frame, with_setting):
    """ "dataset / model" of each row, "(setting)" after it where asked."""
    names = frame["dataset"].astype(str) + " / " + frame["model"].astype(str)
    return names + " (" + collect.point_labels(frame) + ")" if with_setting else names


def escape(text):
    """Text as reStructuredText shows it literally, on one line."""
    text = " ".join(str(text).split())
    return re.sub(r"([\\`*_|])", r"\\\1", text)


def _shorten(text, longest=LONGEST_REASON):
    text = " ".join(str(text).split())
    return text if len(text) <= longest else text[: longest - 1].rstrip() + "…"


def heading(title):
    return "{}\n{}\n".format(title, RULE * len(title))


def heat_map_section(image_uri, alpha):
    lines = [heading("Relative speed")]
    if image_uri:
        # docutils refuses lines over 10,000 characters: the URI goes on
        # lines of its own, which the directive joins again
        lines += [".. image::"] + [
            "   " + image_uri[start : start + URI_LINE]
            for start in range(0, len(image_uri), URI_LINE)
        ]
        lines += [
            "   :alt: relative-speed heat-map",
            "   :width: 100%",
            "   :target: relative_speed.png_",
            "",
        ]
    lines += [
        "Each backend's time over the fastest backend's on the same workload and hardware "
        "(steady-state seconds per epoch for training, single-sample latency for inference; "
        "median over repeats): 1.00 is the fastest, 2.00 takes twice as long. "
        "``*`` significantly slower than the fastest, ``=`` not significantly different "
        "(level {:g}), no mark: not tested; ``~`` noisy repeats; ``†`` the cell's hidden "
        "settings (its manifest: float32 arithmetic, autotuning, threads, denormals) differ "
        "from the others' in its column, or were not recorded. Compare within a column: each "
        "is its own race. Full size and caption: `relative_speed.png`_.".format(alpha),
        "",
    ]
    return lines


def significance_section(pairs, alpha, most=MOST_PAIRS):
    """``pairs``: the significance table, with ``where`` (``pair_labels``)."""
    lines = [heading("Significant differences")]
    if not len(pairs):
        return lines + ["No two backends ran on the same workload and setting.", ""]
    tested = pairs[pairs["p_holm"].notna()]
    untested = len(pairs) - len(tested)
    if not len(tested):
        why = (
            "each side needs two repeats or more"
            if (pairs["test"] == stats.NOT_TESTED).any()
            else "the repeats do not vary"
        )
        return lines + [
            "None of the {} pair(s) of backends was tested: {}. One run cannot separate a "
            "backend's speed from the machine's noise, so the heat-map's ratios are single "
            "runs' and no difference is called significant. Set ``repeats`` to 3 or more to "
            "test them.".format(len(pairs), why),
            "",
        ]
    found = significant_pairs(pairs)
    text = (
        "{} tested pair(s) of backends differ significantly (Welch's t-test on log values "
        "with the repeat as the unit, Holm-corrected within each workload and setting, "
        "family-wise level {:g})".format(
            "{} of {}".format(len(found), len(tested))
            if len(found)
            else "None of the {}".format(len(tested)),
            alpha,
        )
    )
    if untested:
        text += "; {} pair(s) with fewer than two repeats on a side were not tested".format(
            untested
        )
    lines += [text + ". Every pair: `significance.html`_.", ""]
    for _, row in found.head(most).iterrows():
        lines.append("- {}".format(_pair_line(row)))
    if len(found) > most:
        lines.append("- … and {} more in `significance.html`_".format(len(found) - most))
    return lines + [""]


def pair_labels(pairs, summary):
    """Each pair's workload, with its setting as the tables name it where the
    summary holds more than one (the accelerator of devices >= 1 from the
    summary's cells)."""
    if not len(pairs):
        return pd.Series([], index=pairs.index, dtype=object)
    accelerators = summary[stats.GROUP + ["accelerator"]].drop_duplicates(stats.GROUP)
    frame = pairs[stats.GROUP].merge(accelerators, on=stats.GROUP, how="left")
    frame.index = pairs.index
    frame["accelerator"] = frame["accelerator"].fillna("gpu")
    return workload_labels(frame, collect.point_labels(summary).nunique() > 1)


def _pair_line(row):
    ratio = "{:.2f}".format(row["ratio"])
    if pd.notna(row["ratio_ci_low"]):
        ratio += " [{:.2f}, {:.2f}]".format(row["ratio_ci_low"], row["ratio_ci_high"])
    line = "{}: **{}** faster than {}, time ratio {}, p = {:.2g}".format(
        escape(row["where"]), escape(row["faster"]), escape(row["slower"]), ratio, row["p_holm"]
    )
    if isinstance(row.get("hidden_settings_differ"), str):
        line += " (hidden settings differ: {})".format(escape(row["hidden_settings_differ"]))
    return line


def not_run_section(summary, most_groups=MOST_GROUPS, most_workloads=MOST_WORKLOADS):
    lines = [heading("Not run, and why")]
    groups = not_run_groups(summary)
    if not groups:
        return lines + ["Every cell of the matrix ran and has its figure.", ""]
    counts = {}
    for group in groups:
        kind = (
            group["status"]
            if group["status"] in (CellStatus.PARTIAL, CellStatus.NOT_APPLICABLE)
            else "lost"
        )
        counts[kind] = counts.get(kind, 0) + group["cells"]
    parts = []
    if counts.get("lost"):
        parts.append("{} did not run or failed".format(counts["lost"]))
    if counts.get(CellStatus.PARTIAL):
        parts.append(
            "{} lost some repeats (their figure is the other repeats')".format(
                counts[CellStatus.PARTIAL]
            )
        )
    if counts.get(CellStatus.NOT_APPLICABLE):
        parts.append(
            "{} are left out of the matrix by design (n/a)".format(
                counts[CellStatus.NOT_APPLICABLE]
            )
        )
    lines += [
        "Of {} cells, {}. Every cell, with its reason: `summary.csv`_ (``status``, "
        "``error``).".format(len(summary), ", ".join(parts)),
        "",
    ]
    for group in groups[:most_groups]:
        workloads = group["workloads"]
        shown = ", ".join(escape(w) for w in workloads[:most_workloads])
        if len(workloads) > most_workloads:
            shown += " and {} more".format(len(workloads) - most_workloads)
        if group["setting"]:
            shown += " ({})".format(escape(group["setting"]))
        lines.append(
            "- **{}** ({} cell{}) — {} on {}: {}".format(
                NOT_RUN_LABEL.get(group["status"], escape(group["status"])),
                group["cells"],
                "" if group["cells"] == 1 else "s",
                ", ".join(escape(b) for b in group["backends"]),
                shown,
                escape(_shorten(group["reason"])),
            )
        )
    if len(groups) > most_groups:
        rest = groups[most_groups:]
        lines.append(
            "- … and {} more reason(s), {} cell(s), in `summary.csv`_".format(
                len(rest), sum(g["cells"] for g in rest)
            )
        )
    return lines + [""]


def op_gaps_section(op_gaps, most=MOST_WORKLOADS):
    """Per workload and setting, its slowest profiled backend against the
    fastest, op by op (``results/tables/op_gaps.csv``)."""
    lines = [heading("Why slower, op by op")]
    if op_gaps is None or not len(op_gaps):
        return lines + ["No two backends of one workload and setting have op profiles.", ""]
    lines += [
        "The slowest backend of each workload against its fastest, from each framework's own "
        "profiler (every gap in `op_gaps.html`_, each cell's step by op category in "
        "`ops.html`_):",
        "",
    ]
    slowest = op_gaps.sort_values("times_slower", ascending=False).drop_duplicates(
        [column for column in op_gaps.columns if column in matrix.CELL and column != "backend"]
        + ["task"]
    )
    for _, row in slowest.head(most).iterrows():
        added = (
            str(row["ops_that_add_most"]).split("; ")[0]
            if isinstance(row["ops_that_add_most"], str)
            else None
        )
        lines.append(
            "- {}/{}: ``{}`` {:.2g}× ``{}``'s step: {}{}".format(
                row["dataset"],
                row["model"],
                row["backend"],
                row["times_slower"],
                row["fastest"],
                escape(row["where"]),
                "; first of the ops it adds: {}".format(escape(added)) if added else "",
            )
        )
    if len(slowest) > most:
        lines.append("- … and {} more workload(s) and setting(s)".format(len(slowest) - most))
    return lines + [""]


def time_to_accuracy_section(cells, pairs, alpha, most=MOST_PAIRS):
    """Which backend reaches its workload's target first
    (``results/tables/time_to_accuracy*.csv``): the significant pairs, one
    line each, else that none was and each workload and point's k of N."""
    lines = [heading("Time to accuracy")]
    if not len(cells):
        return lines + ["No run of a workload that measures its time to accuracy.", ""]
    settings = cells.assign(where=workload_labels(cells, collect.point_labels(cells).nunique() > 1))
    where = {tuple(row[stats.GROUP]): row["where"] for _, row in settings.iterrows()}
    tested = pairs[pairs["p_holm"].notna()] if len(pairs) else pairs
    found = tested[tested["significant"].astype("boolean").fillna(False).astype(bool)]
    if len(tested):
        counted = "{} of {} tested".format(len(found), len(tested))
        text = "{} pair(s) of backends reach the target at significantly different times".format(
            counted if len(found) else "None of the {} tested".format(len(tested))
        )
    else:
        text = (
            "None of the {} pair(s) of backends was tested (each needs 2 seeds or more a side, "
            "and a seed that reached the target)".format(len(pairs))
        )
    text += (
        " (log-rank on the seeds' times to the target, a miss censored, Holm-corrected within "
        "each workload and point, level {:g}). Every cell and pair: `time_to_accuracy.html`_, "
        "`time_to_accuracy_pairs.html`_.".format(alpha)
    )
    lines += [text, ""]
    for _, row in found.head(most).iterrows():
        lines.append("- " + _first_to_target_line(row, where[tuple(row[stats.GROUP])]))
    if len(found) > most:
        lines.append("- … and {} more in `time_to_accuracy_pairs.html`_".format(len(found) - most))
    if not len(found):
        for key, group in settings.groupby(stats.GROUP, sort=True):
            counts = ", ".join(
                "{} {} of {}{}".format(
                    escape(row["backend"]),
                    int(row["reached"]),
                    int(row["seeds"]),
                    "" if pd.notna(row["time_to_target"]) else " (did not converge)",
                )
                for _, row in group.iterrows()
            )
            lines.append(
                "- {}: seeds that reached the target: {}".format(escape(where[key]), counts)
            )
        if any("cannot be significant" in str(t) for t in pairs.get("test", [])):
            lines += [
                "",
                "With these seeds the test cannot reject: add seeds "
                "(``time_to_accuracy: seeds``) to tell the backends apart.",
            ]
    return lines + [""]


def _first_to_target_line(row, where):
    """ "native-jax reaches 0.85 before keras-torch on digits / mlp: 3.1 s
    against 5.2 s (p=0.01)" """

    def time(value):
        return "did not converge" if pd.isna(value) else "{:.3g} s".format(value)

    return "**{}** reaches {:.4g} before {} on {}: {} against {} (Holm p = {:.2g})".format(
        escape(row["faster"]),
        row["target"],
        escape(row["slower"]),
        escape(where),
        time(row["faster_time"]),
        time(row["slower_time"]),
        row["p_holm"],
    )


def page(summary, pairs, alpha, image_uri=None, op_gaps=None, time_to_accuracy=None):
    """The front page's reStructuredText: heat-map, significant differences,
    why slower op by op (where there are op profiles), which backend reaches
    the target first (``time_to_accuracy``: its cells' and pairs' tables,
    where a workload measures it), what was not run and why."""
    pairs = pairs.assign(where=pair_labels(pairs, summary))
    lines = heat_map_section(image_uri, alpha)
    lines += significance_section(pairs, alpha)
    if op_gaps is not None:
        lines += op_gaps_section(op_gaps)
    if time_to_accuracy is not None:
        lines += time_to_accuracy_section(*time_to_accuracy, alpha)
    lines += not_run_section(summary)
    return "\n".join(lines).rstrip() + "\n"


def image_uri(path):
    """The PNG at ``path`` as a data URI: the description is one HTML fragment
    and carries its images."""
    with open(path, "rb") as handle:
        return "data:image/png;base64," + base64.b64encode(handle.read()).decode("ascii")


def write(summary, pairs, alpha, heat_map, output, op_gaps=None, time_to_accuracy=None):
    with open(output, "w", encoding="utf-8") as handle:
        handle.write(page(summary, pairs, alpha, image_uri(heat_map), op_gaps, time_to_accuracy))
