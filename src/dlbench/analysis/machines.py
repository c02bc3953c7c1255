"""The comparison across machines: "do certain backends perform better in
certain computing environments?" (the published question's words: here,
testbeds).

A testbed is a machine with its settings of the dimensions other than
the devices (its CPU threads: one vCPU against eight is the published
comparison of testbeds); backends are compared on one workload and
device count. Per workload: every backend's headline on every testbed
(median [interval]), its ratio to the reference testbed, its rank in
each; and a test of whether the ranking changes: the backend x testbed
interaction in a two-way analysis of variance of the log of the repeats'
headlines (the additive model, where every testbed scales every backend
by one factor, against the model of cell means; an F-test). The repeat is
the unit, as in the pairwise tests.
"""

import math

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dlbench.analysis.collect import (  # noqa: E402
    HEADLINE,
    device_label,
    labels,
)
from dlbench.analysis.plots_style import backend_style, figure_and_axes, save  # noqa: E402
from dlbench.analysis.tables import median_interval  # noqa: E402
from dlbench.plan import matrix  # noqa: E402
from dlbench.record.fields import MEASURED, CellStatus, Status

# Compared within: one workload on one device count.
GROUP = ["dataset", "model", "devices"]
TESTBED = [c for c in matrix.CELL if c not in GROUP + ["dataset", "model", "backend"]]


def testbed_labels(frame):
    """Each row's testbed: its machine, and the other dimensions' values
    where the frame holds more than one."""
    varying = [c for c in matrix.shown_dimensions(frame) if c in TESTBED and c != "machine"]
    return labels(frame, ["machine"] + varying)


def reference_testbed(testbeds, frame, reference_machine):
    """The reference machine's first testbed, or the first testbed."""
    if reference_machine is not None:
        own = [
            t for t in testbeds if t in set(frame[frame["machine"] == reference_machine]["testbed"])
        ]
        if own:
            return own[0]
    return testbeds[0]


def _order(frame, machines):
    """Testbeds in order: the machines as given (this machine first),
    then their settings."""
    rank = {machine: i for i, machine in enumerate(machines)}
    keys = frame[["testbed", "machine"] + [c for c in TESTBED if c != "machine"]]
    keys = keys.drop_duplicates().assign(order=keys["machine"].map(rank).fillna(len(rank)))
    return list(keys.sort_values(["order"] + TESTBED)["testbed"])


def _value(cell):
    if cell["status"] == CellStatus.NOT_APPLICABLE:
        return "n/a"
    if cell["status"] not in MEASURED:
        return "{}: {}".format(cell["status"], cell["error"] or "no reason recorded")
    return median_interval(cell)


def comparison(summary, machines, reference_machine=None):
    """One row per workload, device count, backend and testbed: the
    headline (median and interval), its ratio to the backend's on the
    reference testbed and the backend's rank among the backends of its
    testbed (1: fastest). Failed cells keep their rows and reasons."""
    frame = summary.assign(testbed=testbed_labels(summary))
    testbeds = _order(frame, machines)
    reference = reference_testbed(testbeds, frame, reference_machine)
    rows = []
    for _, cells in frame.groupby(GROUP, sort=True):
        measured = cells[cells["status"].isin(MEASURED) & cells["headline_median"].notna()]
        ranks = measured.groupby("testbed")["headline_median"].rank(method="min")
        base = measured[measured["testbed"] == reference].set_index("backend")["headline_median"]
        for index, cell in cells.iterrows():
            ratio = None
            if index in measured.index and cell["backend"] in base.index:
                ratio = cell["headline_median"] / base[cell["backend"]]
            rows.append(
                {
                    "dataset": cell["dataset"],
                    "model": cell["model"],
                    "devices": cell["devices"],
                    "accelerator": cell["accelerator"],
                    "backend": cell["backend"],
                    "testbed": cell["testbed"],
                    "machine": cell["machine"],
                    "headline": cell["headline"],
                    "status": cell["status"],
                    "value": _value(cell),
                    "headline_median": cell["headline_median"],
                    "ratio_to_reference": ratio,
                    "reference": reference,
                    "rank": ranks.get(index),
                }
            )
    table = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    table["order"] = table["testbed"].map({t: i for i, t in enumerate(testbeds)})
    return table.sort_values(GROUP + ["backend", "order"], ignore_index=True).drop(columns="order")


COMPARISON_COLUMNS = GROUP + [
    "accelerator",
    "backend",
    "testbed",
    "machine",
    "headline",
    "status",
    "value",
]
COMPARISON_COLUMNS += ["headline_median", "ratio_to_reference", "reference", "rank"]


def shown(table):
    """A row per workload and backend, a column group per testbed."""
    if table.empty:
        return pd.DataFrame(columns=["workload", "backend"])
    table = table.assign(
        workload=table["dataset"]
        + " / "
        + table["model"]
        + ", "
        + [device_label(d, a) for d, a in zip(table["devices"], table["accelerator"])],
        ratio=[None if pd.isna(r) else "x{:.2f}".format(r) for r in table["ratio_to_reference"]],
        rank=[None if pd.isna(r) else str(int(r)) for r in table["rank"]],
    )
    testbeds = list(dict.fromkeys(table["testbed"]))
    wide = table.pivot(
        index=["workload", "backend"], columns="testbed", values=["value", "ratio", "rank"]
    )
    columns = [(kind, t) for t in testbeds for kind in ("value", "ratio", "rank")]
    wide = wide[columns]
    wide.columns = [
        "{}: {}".format(t, {"value": "median [CI]", "ratio": "vs reference", "rank": "rank"}[k])
        for k, t in columns
    ]
    return wide.reset_index()


def f_test_interaction(values, backends, testbeds):
    """F statistic, degrees of freedom and p-value of the backend x
    testbed interaction on ``values`` (one per repeat), or None where
    the design cannot tell (no repeats to estimate the noise, or nothing
    left to test once the main effects are fitted)."""
    y = np.asarray(values, dtype=float)
    b = pd.Categorical(backends)
    t = pd.Categorical(testbeds)
    cells = pd.Categorical([f"{x}\x00{z}" for x, z in zip(backends, testbeds)])
    full = pd.get_dummies(cells).to_numpy(float)
    additive = np.column_stack(
        [np.ones(len(y))]
        + [pd.get_dummies(b, drop_first=True).to_numpy(float)]
        + [pd.get_dummies(t, drop_first=True).to_numpy(float)]
    )

    def residual(design):
        coefficients, *_ = np.linalg.lstsq(design, y, rcond=None)
        return float(((y - design @ coefficients) ** 2).sum()), int(np.linalg.matrix_rank(design))

    rss_full, rank_full = residual(full)
    rss_additive, rank_additive = residual(additive)
    df_error = len(y) - rank_full
    df_interaction = rank_full - rank_additive
    if df_error < 1 or df_interaction < 1 or rss_full <= 0:
        return None
    statistic = ((rss_additive - rss_full) / df_interaction) / (rss_full / df_error)
    from scipy import stats as scipy_stats

    return (
        statistic,
        df_interaction,
        df_error,
        float(scipy_stats.f.sf(statistic, df_interaction, df_error)),
    )


NOT_TESTABLE = "not tested: needs two testbeds and two backends with 2 repeats or more"


def interaction(metrics, alpha=0.05):
    """Per workload and device count: does the ranking of backends change
    between testbeds? The interaction test on the log of every
    successful repeat's headline, over the backends that ran on at least two
    testbeds."""
    ok = metrics[metrics["status"] == Status.OK]
    ok = ok.assign(testbed=testbed_labels(ok))
    rows = []
    for key, runs in ok.groupby(GROUP, sort=True):
        column = HEADLINE[runs["task"].iloc[0]]
        runs = runs[runs[column] > 0]
        on_several = runs.groupby("backend")["testbed"].transform("nunique") >= 2
        runs = runs[on_several]
        row = dict(zip(GROUP, key))
        row.update(
            headline=column,
            testbeds=runs["testbed"].nunique(),
            backends=runs["backend"].nunique(),
            runs=len(runs),
        )
        result = None
        if row["testbeds"] >= 2 and row["backends"] >= 2:
            result = f_test_interaction(
                [math.log(v) for v in runs[column]],
                list(runs["backend"]),
                list(runs["testbed"]),
            )
        if result is None:
            row.update(test=NOT_TESTABLE)
        else:
            statistic, df_interaction, df_error, p_value = result
            row.update(
                f_statistic=statistic,
                df_interaction=df_interaction,
                df_error=df_error,
                p_value=p_value,
                ranking_changes="yes" if p_value < alpha else "not shown",
                test="backend x testbed interaction, F-test on log values",
            )
        rows.append(row)
    return pd.DataFrame(rows, columns=INTERACTION_COLUMNS)


INTERACTION_COLUMNS = GROUP + ["headline", "testbeds", "backends", "runs", "f_statistic"]
INTERACTION_COLUMNS += ["df_interaction", "df_error", "p_value", "ranking_changes", "test"]


def plot(table, output):
    """``figure_of``, written to ``output``."""
    save(figure_of(table), output, bbox_inches="tight")


def figure_of(table):
    """One panel per workload and device count: each backend's headline on
    every testbed (log scale), so that a change of ranking shows as
    crossing lines; failed cells named where their point would be."""
    groups = list(table.groupby(GROUP, sort=True)) if len(table) else []
    columns = max(1, min(3, len(groups)))
    rows_of_panels = max(1, -(-len(groups) // columns))
    figure, axes = figure_and_axes(
        rows_of_panels,
        columns,
        dpi=110,
        figsize=(4.8 * columns + 2.5, 3.8 * rows_of_panels),
        squeeze=False,
    )
    for axis in axes.flat[len(groups) :]:
        axis.set_visible(False)
    for axis, (key, cells) in zip(axes.flat, groups):
        testbeds = list(dict.fromkeys(cells["testbed"]))
        for backend, runs in cells.groupby("backend"):
            positions = [testbeds.index(t) for t in runs["testbed"]]
            axis.plot(
                positions,
                runs["headline_median"].astype(float),
                label=backend,
                **backend_style(backend),
            )
            for position, (_, cell) in zip(positions, runs.iterrows()):
                if cell["status"] not in (*MEASURED, CellStatus.NOT_APPLICABLE):
                    axis.annotate(
                        cell["status"],
                        (position, 0.02),
                        xycoords=("data", "axes fraction"),
                        color="tab:red",
                        rotation=90,
                        fontsize="x-small",
                    )
        axis.set_xticks(range(len(testbeds)))
        axis.set_xticklabels(testbeds, rotation=20, ha="right", fontsize="small")
        if (cells["headline_median"].astype(float) > 0).any():
            axis.set_yscale("log")
        else:
            axis.set_yticks([])
            axis.text(0.5, 0.5, "no successful run", ha="center", transform=axis.transAxes)
        dataset, model, devices = key
        label = device_label(devices, cells["accelerator"].iloc[0])
        axis.set_title("{} / {}, {}".format(dataset, model, label), fontsize="small")
        axis.set_ylabel(cells["headline"].iloc[0].replace("_", " "))
    if groups:
        handles = {}
        for axis in axes.flat[: len(groups)]:
            for handle, label in zip(*axis.get_legend_handles_labels()):
                handles.setdefault(label, handle)
        figure.legend(
            handles.values(),
            handles.keys(),
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
            fontsize="small",
        )
    else:
        axes[0][0].text(
            0.5, 0.5, "no run on any machine", ha="center", transform=axes[0][0].transAxes
        )
    figure.suptitle("Backends across machines (Keras solid, native dashed; lower is faster)")
    figure.tight_layout()
    return figure


CAPTION = (
    "Every backend's headline on every testbed (a machine with its values of the other "
    "dimensions where they differ, e.g. 'lab-a, threads=4'), median over repeats [interval for "
    "the median], its ratio to the same backend on the reference testbed ({reference}) and its "
    "rank among the backends of its testbed (1: fastest). Cells that failed keep their row and "
    "say why."
)
INTERACTION_CAPTION = (
    "Does the ranking of backends change between machines? Two-way analysis of variance of the "
    "log of every successful repeat's headline with backend and testbed as factors: the "
    "additive model (every testbed scales every backend's time by the same factor, so the "
    "ranking holds) against the model of cell means, an F-test of the backend x testbed "
    "interaction; 'yes' below the significance level {alpha}. Needs repeats (2 or more per cell "
    "somewhere) to estimate the noise; backends measured on one testbed only are left out."
)
