"""Every table the workflow publishes, written three ways: CSV (the data),
Markdown (for a terminal or a notebook) and a small self-contained HTML
page, which is what the Snakemake report shows (it offers CSVs for
download only); and the published layout of a workload's table, with its
captions."""

import html as html_escape
from types import SimpleNamespace

import pandas as pd

from dlbench.analysis import collect, hidden_settings
from dlbench.plan import matrix
from dlbench.record.fields import MEASURED, CellStatus

STYLE = (
    "body{font-family:sans-serif;font-size:13px;margin:12px}"
    "table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:3px 6px;"
    "text-align:left}th{background:#f0f0f0}tr:nth-child(even){background:#fafafa}"
    "p{max-width:60em;color:#333}"
)


def _shown(table):
    """Missing values as "–", not "nan"."""
    return table.astype(object).where(table.notna(), None)


def markdown(table, title, caption, floatfmt=".4g"):
    body = (
        _shown(table).to_markdown(index=False, floatfmt=floatfmt, missingval="–")
        if len(table)
        else "(nothing measured)"
    )
    return "### {}\n\n{}\n\n{}\n".format(title, body, caption)


def html(table, title, caption):
    def number(value):
        return "{:.4g}".format(value)

    body = table.to_html(index=False, na_rep="–", float_format=number, border=0)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title>'
        "<style>{style}</style></head>\n<body><h3>{title}</h3>\n{body}\n<p>{caption}</p>"
        "</body></html>\n"
    ).format(
        title=html_escape.escape(title),
        style=STYLE,
        body=body,
        caption=html_escape.escape(caption),
    )


def write(output, table, title, caption, shown=None):
    """``table`` to ``output.csv``; ``shown`` (the table as people read it,
    ``table`` by default) to ``output.markdown`` and ``output.html``."""
    table.to_csv(output.csv, index=False)
    shown = table if shown is None else shown
    with open(output.markdown, "w") as handle:
        handle.write(markdown(shown, title, caption))
    with open(output.html, "w") as handle:
        handle.write(html(shown, title, caption))


def second_table(output, prefix):
    """The outputs of a rule's second table, named ``<prefix>csv``,
    ``<prefix>markdown`` and ``<prefix>html``, as ``write`` takes them."""
    return SimpleNamespace(
        **{part: getattr(output, prefix + part) for part in ("csv", "markdown", "html")}
    )


def median_interval(row):
    """A cell's headline as "median [low, high]" (no interval with one repeat)."""
    text = "{:.4g}".format(row["headline_median"])
    if pd.notna(row["headline_ci_low"]):
        text += " [{:.4g}, {:.4g}]".format(row["headline_ci_low"], row["headline_ci_high"])
    return text


HEADLINE_LABEL = {"steady_epoch_seconds": "s/epoch", "latency_p50_ms": "p50 latency ms"}


def _headline_cell(row):
    if row["status"] == CellStatus.NOT_APPLICABLE:
        return row["error"]
    if row["status"] not in MEASURED:
        return "{}: {}".format(row["status"], row["error"] or "no reason recorded")
    text = median_interval(row)
    if pd.notna(row["noisy"]) and bool(row["noisy"]):
        text += " NOISY (CV {:.0%})".format(row["headline_cv"])
    return text


def _versus_fastest_cell(row):
    if pd.isna(row["relative_to_fastest"]):
        return None
    if row["vs_fastest"] == "fastest":
        return "fastest"
    text = "x{:.2f}".format(row["relative_to_fastest"])
    if row["vs_fastest"] == "slower":
        return text + " (significant, p={:.2g})".format(row["vs_fastest_p_holm"])
    if row["vs_fastest"] == "not different":
        return text + " (not significant, p={:.2g})".format(row["vs_fastest_p_holm"])
    return text + " (not tested)"


def workload_table(summary_frame, dataset, model, checks=None):
    """The published layout: a row per framework, a column per hardware
    setting, the task's headline figure (median [CI]); then the rest, with
    the equivalence check's verdict per backend where ``checks`` (the
    equivalence table) has the workload. Returns the table and the
    workload's task."""
    cells = summary_frame[(summary_frame["dataset"] == dataset) & (summary_frame["model"] == model)]
    cells = cells.assign(
        hardware=collect.point_labels(cells),
        value=cells.apply(_headline_cell, axis=1),
        versus=cells.apply(_versus_fastest_cell, axis=1),
    )
    label = HEADLINE_LABEL[cells["headline"].iloc[0]]
    table = cells.pivot(index="backend", columns="hardware", values="value")
    versus = cells.pivot(index="backend", columns="hardware", values="versus")
    table = pd.concat([table.add_suffix(": " + label), versus.add_suffix(": vs fastest")], axis=1)[
        [name + suffix for name in table.columns for suffix in (": " + label, ": vs fastest")]
    ]
    scaled = cells[cells["scaling_efficiency"].notna()]
    if len(scaled):
        efficiency = scaled.pivot(index="backend", columns="hardware", values="scaling_efficiency")
        efficiency.columns = ["{}: scaling efficiency".format(c) for c in efficiency.columns]
        table = table.join(efficiency.map("{:.2f}".format))
    if cells["task"].iloc[0] == "infer":
        extra = {"p99_latency_ms": "latency_p99_ms", "s_per_1000": "seconds_per_1000_samples"}
    else:
        cells = cells.assign(parity=cells.apply(_parity_cell, axis=1))
        extra = {
            "first_epoch_s": "first_epoch_seconds",
            "test_accuracy": "test_accuracy",
            "accuracy_parity": "parity",
        }
    cells = cells.assign(parameters=cells["parameters"].map(_count))
    extra["parameters"] = "parameters"
    if "initial_weights" in cells and cells["initial_weights"].notna().any():
        extra["initial_weights"] = "initial_weights"
    if "env_mismatches" in cells and cells["env_mismatches"].notna().any():
        extra["NOT the pinned environment"] = "env_mismatches"
    if hidden_settings.COLUMN in cells and cells[hidden_settings.COLUMN].notna().any():
        extra["hidden settings differ"] = hidden_settings.COLUMN
    others = cells.groupby("backend").agg(**{k: (v, "first") for k, v in extra.items()})
    table = table.join(others)
    if checks is not None:
        checked = checks[(checks["dataset"] == dataset) & (checks["model"] == model)]
        if len(checked):
            column = "same_predictions" if "classes_differing" in checked else "same_steps"
            table = table.join(_verdict_per_backend(checked).rename(column))
    return table.reset_index(), cells["task"].iloc[0]


def _verdict_per_backend(checked):
    """A backend's verdict: the same where all its rows (repeats, machines,
    settings) agree, else the first that departs or was not compared, named
    by its setting where the backend's rows differ in one (a precision)."""
    from dlbench.analysis.equivalence_predictions import VERDICT_SAME_PREDICTIONS
    from dlbench.analysis.equivalence_steps import VERDICT_SAME

    same = (VERDICT_SAME, VERDICT_SAME_PREDICTIONS)

    def one(rows):
        others = rows[~rows["verdict"].isin(same)]
        if not len(others):
            return rows["verdict"].iloc[0]
        varying = [
            name
            for name in matrix.DIMENSION_NAMES
            if name != "devices" and name in rows and rows[name].nunique() > 1
        ]
        if not varying:
            return others["verdict"].iloc[0]
        setting = collect.labels(others, varying).iloc[0]
        return "{}: {}".format(setting, others["verdict"].iloc[0])

    return checked.groupby("backend", sort=False)[list(checked.columns)].apply(one)


def _count(value):
    return "{:,}".format(int(value)) if pd.notna(value) else None


def _parity_cell(row):
    if not isinstance(row["accuracy_parity"], str):
        return None
    text = "{:+.3f} vs median".format(row["accuracy_gap"])
    if row["accuracy_parity"] == "ok":
        return "ok ({})".format(text)
    return "OUTSIDE ±{:g} ({})".format(row["accuracy_tolerance"], text)


VERSUS_FASTEST = (
    " vs fastest: the cell's median over the fastest backend's on the same hardware, and "
    "whether the difference is significant (Welch's t-test on log values over repeats, "
    "Holm-corrected over the workload's pairs; not tested with fewer than two repeats). NOISY: "
    "the repeats' coefficient of variation is above the configured noise threshold."
)
TABLE_CAPTIONS = {
    "train": "Steady-state seconds per training epoch (median of epochs 2 onwards, less any "
    "that compiled again, median over repeats, [confidence interval for the median]); first "
    "epoch apart; test accuracy after "
    "the last epoch; accuracy parity: the test accuracy's distance from the median over the "
    "backends, flagged OUTSIDE beyond the workload's tolerance. Initial weights: shared (every "
    "backend started from the same weights, drawn once per workload and seed) or OWN (the "
    "backend could not load them and started from its own draw; why). Scaling efficiency: "
    "throughput on N devices / (N x throughput on the fewest devices measured); emulated "
    "devices share the CPU's cores and show the data-parallel overhead, not a speed-up.",
    "infer": "Latency of one sample in ms (median of the timed calls after warm-up, median "
    "over repeats, [confidence interval for the median]); p99 latency; seconds per 1,000 "
    "samples at the workload's batch size.",
}
NOT_PINNED = (
    " NOT the pinned environment (only where a backend ran in an existing interpreter that "
    "differs from its env file): what differs; those numbers are not from the pinned versions."
)
TABLE_CAPTIONS = {
    task: caption + VERSUS_FASTEST + NOT_PINNED + hidden_settings.CAPTION
    for task, caption in TABLE_CAPTIONS.items()
}
