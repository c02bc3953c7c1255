"""The comparisons' figures: Keras against native (the cost of abstraction
and the lines of code), each precision and compile mode against float32
eager, and each newer version against the older (rules
plot_abstraction_cost, plot_lines_of_code, plot_speedups, plot_versions)."""

import matplotlib.ticker
import numpy as np

from dlbench.analysis import versions as versions_analysis
from dlbench.analysis.collect import labels, point_labels
from dlbench.analysis.plots_style import (
    FRAMEWORK_COLOURS,
    figure_and_axes,
    legend_outside,
    workload_label,
    written,
)
from dlbench.plan import matrix


def abstraction_cost_figure(cost):
    """Keras / native per workload and framework: the slowdown with its
    interval as an error bar, 1 (no cost) as a line; log scale, so 2x
    slower and 2x faster are the same distance from it."""
    cost = cost.assign(setting=point_labels(cost))
    workloads = cost[["dataset", "model", "setting"]].drop_duplicates()
    frameworks = sorted(set(cost["framework"]))
    figure, axis = figure_and_axes(figsize=(8, max(3, 0.9 * len(workloads) + 1.5)))
    step = 0.8 / max(1, len(frameworks))
    for i, framework in enumerate(frameworks):
        rows = cost[cost["framework"] == framework]
        label = framework
        for j, (_, workload) in enumerate(workloads.iterrows()):
            match = rows[
                (rows["dataset"] == workload["dataset"])
                & (rows["model"] == workload["model"])
                & (rows["setting"] == workload["setting"])
            ]
            if match.empty:
                continue
            row = match.iloc[0]
            position = j - 0.4 + step * (i + 0.5)
            axis.errorbar(
                row["slowdown"],
                position,
                xerr=[
                    [row["slowdown"] - row["slowdown_ci_low"]],
                    [row["slowdown_ci_high"] - row["slowdown"]],
                ],
                fmt="o",
                capsize=3,
                color=FRAMEWORK_COLOURS.get(framework, "C{}".format(i)),
                label=label,
            )
            label = None  # one legend entry per framework
            axis.annotate(
                "{:.2f}".format(row["slowdown"]),
                (row["slowdown"], position),
                textcoords="offset points",
                xytext=(6, -3),
                fontsize="small",
            )
    if len(cost):
        axis.axvline(1.0, color="gray", linestyle="--", linewidth=1)
        axis.set_xscale("log")
        legend_outside(axis, title="framework")
    else:
        axis.text(0.5, 0.5, "no Keras / native pair ran", ha="center", transform=axis.transAxes)
    axis.set_yticks(range(len(workloads)))
    axis.set_yticklabels(
        [workload_label(w["dataset"], w["model"], w["setting"]) for _, w in workloads.iterrows()]
    )
    axis.invert_yaxis()
    axis.set_xlabel("slowdown: Keras time / native time (log scale; > 1: Keras slower)")
    axis.set_title("Cost of abstraction: Keras vs native, 95 % bootstrap interval")
    figure.tight_layout()
    return figure


abstraction_cost = written(abstraction_cost_figure)


MODE_MARKERS = {"eager": "o", "auto": "s", "compiled": "D"}


def speedups_figure(found):
    """Each precision and compile mode against its backend's float32 eager
    cell (``dlbench.analysis.precision_and_compile``): a row per workload and
    backend, a marker per mode at its speedup with its interval as an error
    bar, 1 (the baseline) as a line; log scale, so 2x slower and 2x faster
    are the same distance from it."""
    others = [c for c in matrix.shown_dimensions(found) if c not in ("precision", "compile")]
    found = found.assign(setting=labels(found, others) if others else "")
    keys = ["dataset", "model", "setting", "backend"]
    rows = found[keys].drop_duplicates().reset_index(drop=True)
    position = {tuple(row): i for i, row in enumerate(rows.itertuples(index=False))}
    modes = found[["precision", "compile"]].drop_duplicates().sort_values(["precision", "compile"])
    precisions = sorted(set(found["precision"]))
    figure, axis = figure_and_axes(figsize=(8, max(3, 0.45 * len(rows) + 1.5)))
    step = 0.8 / max(1, len(modes))
    for i, (precision, mode) in enumerate(modes.itertuples(index=False)):
        cells = found[(found["precision"] == precision) & (found["compile"] == mode)]
        y = [position[tuple(cell)] - 0.4 + step * (i + 0.5) for cell in cells[keys].values]
        axis.errorbar(
            cells["speedup"],
            y,
            xerr=[
                cells["speedup"] - cells["speedup_ci_low"],
                cells["speedup_ci_high"] - cells["speedup"],
            ],
            fmt=MODE_MARKERS.get(mode, "o"),
            capsize=3,
            color="C{}".format(precisions.index(precision)),
            label="{}, {}".format(precision, mode),
        )
    if len(found):
        axis.axvline(1.0, color="gray", linestyle="--", linewidth=1)
        axis.set_xscale("log")
        axis.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        axis.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter("{:g}".format))
        axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        legend_outside(axis, title="precision, compile")
    else:
        axis.text(0.5, 0.5, "no cell to compare", ha="center", transform=axis.transAxes)
    axis.set_yticks(range(len(rows)))
    names = [workload_label(r.dataset, r.model, r.setting or None) for r in rows.itertuples()]
    axis.set_yticklabels(["{}  {}".format(n, b) for n, b in zip(names, rows["backend"])])
    axis.invert_yaxis()
    axis.set_xlabel("speed-up against float32 eager (log scale; > 1: faster)")
    axis.set_title("Precision and compilation, 95 % bootstrap interval")
    figure.tight_layout()
    return figure


speedups = written(speedups_figure)


def lines_of_code_figure(table):
    """Lines of code per implementation of each workload, as source 004's
    figure: a bar per backend, the model's definition and the training
    program or inference call stacked."""
    workloads = table[["dataset", "model", "task"]].drop_duplicates()
    columns = max(1, min(4, len(workloads)))
    rows_of_panels = max(1, -(-len(workloads) // columns))
    figure, axes = figure_and_axes(
        rows_of_panels, columns, figsize=(4 * columns, 4.2 * rows_of_panels), squeeze=False
    )
    for axis in axes.flat[len(workloads) :]:
        axis.set_visible(False)
    for axis, (_, workload) in zip(axes.flat, workloads.iterrows()):
        rows = table[
            (table["dataset"] == workload["dataset"]) & (table["model"] == workload["model"])
        ]
        rows = rows.sort_values("lines")
        positions = np.arange(len(rows))
        colours = [
            "tab:orange" if kind == "native" else "tab:blue" for kind in rows["implementation"]
        ]
        axis.bar(positions, rows["model_lines"], color=colours, label="model")
        axis.bar(
            positions,
            rows["program_lines"],
            bottom=rows["model_lines"],
            color=colours,
            alpha=0.45,
            label="training program" if workload["task"] == "train" else "inference call",
        )
        for position, total in zip(positions, rows["lines"]):
            axis.text(position, total, str(total), ha="center", va="bottom", fontsize="small")
        axis.set_xticks(positions)
        axis.set_xticklabels(rows["backend"], rotation=45, ha="right")
        axis.set_title(workload_label(workload["dataset"], workload["model"]))
        axis.set_ylabel("lines of code")
        axis.legend(fontsize="small")
    if table.empty:
        axes[0][0].set_visible(True)
        axes[0][0].text(0.5, 0.5, "no implementation", ha="center", transform=axes[0][0].transAxes)
    figure.suptitle("Lines of code (blue: Keras, orange: native; solid: model, light: step)")
    figure.tight_layout()
    return figure


lines_of_code = written(lines_of_code_figure)


def versions_figure(found):
    """Each newer version's speed-up over the older version of its backend
    (``dlbench.analysis.versions``): a row per workload, setting, backend and
    pair of versions, the interval as an error bar, 1 (no change) as a line;
    log scale, filled where the change is significant."""
    others = []
    if len(found):
        found = found.assign(machine=versions_analysis.machines(found))
        others = versions_analysis.shown_dimensions(found)
    found = found.assign(setting=labels(found, others) if others else "").reset_index(drop=True)
    figure, axis = figure_and_axes(figsize=(8, max(3, 0.45 * len(found) + 1.5)))
    for significant, marker in ((True, "o"), (False, "o")):
        cells = found[found["significant"].astype(bool) == significant]
        axis.errorbar(
            cells["speedup"],
            cells.index,
            xerr=[
                cells["speedup"] - cells["speedup_ci_low"],
                cells["speedup_ci_high"] - cells["speedup"],
            ],
            fmt=marker,
            capsize=3,
            color="C0",
            markerfacecolor="C0" if significant else "white",
            label="significant" if significant else "not significant",
        )
    if len(found):
        axis.axvline(1.0, color="gray", linestyle="--", linewidth=1)
        axis.set_xscale("log")
        axis.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter("{:g}".format))
        axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        legend_outside(axis, title="the change")
    else:
        axis.text(0.5, 0.5, "no two versions to compare", ha="center", transform=axis.transAxes)
    axis.set_yticks(range(len(found)))
    axis.set_yticklabels(
        [
            "{}  {}: {} -> {}".format(
                workload_label(r.dataset, r.model, r.setting or None),
                r.backend,
                r.older_versions,
                r.newer_versions,
            )
            for r in found.itertuples()
        ]
    )
    axis.invert_yaxis()
    axis.set_xlabel("the newer version's speed-up over the older (x, log scale)")
    axis.set_title("Is the new release faster?")
    figure.tight_layout()
    return figure


versions = written(versions_figure)


def version_history_figure(found):
    """Each series of three and more releases (dlbench.analysis.version_history):
    an axis per backend and setting, its releases along it, a line per
    workload of its time over the oldest release's, a square and its words
    where a step is."""
    if found.empty:
        figure, axis = figure_and_axes(figsize=(8, 3))
        axis.text(0.5, 0.5, "no backend ran three releases", ha="center", va="center")
        axis.set_axis_off()
        return figure
    others = [c for c in matrix.shown_dimensions(found.assign(versions="")) if c != "versions"]
    panels = ["backend"] + [c for c in others if c not in ("dataset", "model", "backend")]
    groups = list(found.groupby(panels, sort=True))
    figure, axes = figure_and_axes(len(groups), 1, figsize=(8, 3.2 * len(groups)), squeeze=False)
    for axis, (key, panel) in zip(axes[:, 0], groups):
        key = key if isinstance(key, tuple) else (key,)
        for (dataset, model), rows in panel.groupby(["dataset", "model"], sort=True):
            rows = rows.sort_values("position")
            line = axis.plot(
                rows["position"],
                rows["relative_to_first"],
                marker="o",
                label=dataset + " / " + model,
            )[0]
            for row in rows[rows["step"].notna()].to_dict("records"):
                axis.plot(
                    row["position"], row["relative_to_first"], "s", color=line.get_color(), ms=10
                )
                axis.annotate(
                    "{} from here".format(row["step"]),
                    (row["position"], row["relative_to_first"]),
                    textcoords="offset points",
                    xytext=(-10, 0),
                    ha="right",
                    va="center",
                    color=line.get_color(),
                    fontsize=8,
                )
        ticks = panel.drop_duplicates("position").sort_values("position")
        axis.set_xticks(list(ticks["position"]))
        axis.set_xticklabels(list(ticks["release"]), fontsize=8)
        axis.axhline(1.0, color="gray", linestyle="--", linewidth=1)
        axis.set_ylabel("time over the oldest's")
        setting = ", ".join("{}={}".format(c, v) for c, v in zip(panels[1:], key[1:]))
        axis.set_title(
            "{}{}: its releases in a series (a square: the level changed from there)".format(
                key[0], " ({})".format(setting) if setting else ""
            ),
            fontsize=10,
        )
        legend_outside(axis)
    figure.tight_layout()
    return figure


version_history = written(version_history_figure)
