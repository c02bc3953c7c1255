"""The workload's timing figures: seconds per epoch, batched inference and
single-sample latency per backend, and time against device and thread
counts with each backend's ideal line (rules plot_epoch_time,
plot_throughput, plot_latency, plot_scaling, plot_threads_scaling)."""

import matplotlib.ticker
import numpy as np

from dlbench.analysis.plots_style import (
    SETTING_ORDER,
    backend_style,
    figure_and_axes,
    legend_outside,
    workload_rows,
    written,
)
from dlbench.record.fields import MEASURED, CellStatus


def _cell_bars(summary, dataset, model):
    """A workload's cells in a stable order, their bar positions, and a
    figure wide enough for them."""
    cells = workload_rows(summary, dataset, model).sort_values(SETTING_ORDER)
    figure, axis = figure_and_axes(figsize=(max(5, 1.6 * len(cells) + 2), 4))
    return cells, np.arange(len(cells)), figure, axis


def _label_bars(figure, axis, cells, positions, ylabel, title):
    """Label the bars and name every cell without a value (failed, timeout,
    n/a) where its bar would be."""
    for position, (_, cell) in zip(positions, cells.iterrows()):
        if cell["status"] not in MEASURED:
            status = "n/a" if cell["status"] == CellStatus.NOT_APPLICABLE else cell["status"]
            axis.text(position, 0, status, ha="center", va="bottom", color="tab:red", rotation=90)
    axis.set_xticks(positions)
    axis.set_xticklabels(
        ["{}\n{}".format(b, setting) for b, setting in zip(cells["backend"], cells["setting"])],
        rotation=90 if len(cells) > 12 else 0,
    )
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    figure.tight_layout()
    return figure


def epoch_time_figure(summary, dataset, model):
    """Steady-state seconds per epoch per backend, median with its CI as
    error bar, first epoch beside it; failed cells named, not hidden."""
    cells, positions, figure, axis = _cell_bars(summary, dataset, model)
    steady = cells["headline_median"].astype(float).to_numpy()
    low = cells["headline_ci_low"].astype(float).to_numpy()
    high = cells["headline_ci_high"].astype(float).to_numpy()
    errors = np.nan_to_num(np.vstack([steady - low, high - steady]), nan=0.0)
    first = cells["first_epoch_seconds"].astype(float).to_numpy()
    width = 0.38
    axis.bar(
        positions - width / 2,
        steady,
        width,
        yerr=errors,
        capsize=4,
        label="steady state (median of epochs 2+)",
        color="tab:blue",
    )
    axis.bar(positions + width / 2, first, width, label="first epoch", color="tab:gray", alpha=0.6)
    legend_outside(axis)
    title = "{} / {}: training time per epoch".format(dataset, model)
    return _label_bars(figure, axis, cells, positions, "seconds per epoch", title)


epoch_time = written(epoch_time_figure)


def throughput_figure(summary, dataset, model):
    """Seconds per 1,000 samples at the workload's batch size per backend
    (median over repeats), as the published feature-extraction table."""
    cells, positions, figure, axis = _cell_bars(summary, dataset, model)
    seconds = cells["seconds_per_1000_samples"].astype(float).to_numpy()
    axis.bar(positions, seconds, color="tab:green")
    title = "{} / {}: batched inference".format(dataset, model)
    return _label_bars(figure, axis, cells, positions, "seconds per 1,000 samples", title)


throughput = written(throughput_figure)


def latency_figure(latencies, dataset, model):
    """Single-sample inference latency per backend: every timed call of
    every repeat, as a box (median, quartiles, 1.5 IQR whiskers)."""
    rows = workload_rows(latencies, dataset, model)
    groups = [
        (key, runs["ms"].to_numpy())
        for key, runs in rows.sort_values(SETTING_ORDER).groupby(["setting", "backend"], sort=False)
    ]
    figure, axis = figure_and_axes(figsize=(max(5, 1.6 * len(groups) + 2), 4))
    if groups:
        axis.boxplot(
            [values for _, values in groups],
            tick_labels=["{}\n{}".format(b, setting) for (setting, b), _ in groups],
            showfliers=True,
        )
        axis.set_yscale("log")
    else:
        axis.text(0.5, 0.5, "no successful run", ha="center", transform=axis.transAxes)
    axis.set_ylabel("latency of one sample (ms, log scale)")
    axis.set_title("{} / {}: inference latency, batch 1".format(dataset, model))
    figure.tight_layout()
    return figure


latency = written(latency_figure)


def scaling_figure(summary, dataset, model):
    """Training throughput against device count per backend, with each
    backend's ideal line (its throughput on the fewest devices, times the
    device ratio) and the scaling efficiency written at every point."""
    cells = workload_rows(summary, dataset, model)
    cells = cells[(cells["devices"] > 0) & cells["samples_per_second"].notna()]
    figure, axis = figure_and_axes(figsize=(8.5, 4.5))
    for label, runs in _lines(cells, "devices"):
        devices = runs["devices"].to_numpy()
        throughput = runs["samples_per_second"].to_numpy(dtype=float)
        style = backend_style(runs["backend"].iloc[0])
        axis.plot(devices, throughput, label=label, **style)
        ideal = throughput[0] * devices / devices[0]
        axis.plot(devices, ideal, linestyle=":", color=style["color"], alpha=0.6)
        for x, y, efficiency in zip(devices, throughput, runs["scaling_efficiency"]):
            if efficiency == efficiency:  # not NaN
                axis.annotate(
                    "{:.0%}".format(efficiency), (x, y), textcoords="offset points", xytext=(4, 4)
                )
    if len(cells):
        axis.plot([], [], linestyle=":", color="gray", label="ideal (linear) scaling")
        legend_outside(axis)
        axis.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        kinds = set(cells["accelerator"])
        unit = "emulated CPU devices" if kinds == {"emulated-cpu"} else "GPUs"
    else:
        axis.text(0.5, 0.5, "no successful multi-device run", ha="center", transform=axis.transAxes)
        unit = "devices"
    axis.set_xlabel("number of {}".format(unit))
    axis.set_ylabel("training samples per second (steady state)")
    axis.set_title(
        "{} / {}: data-parallel scaling (efficiency at each point)".format(dataset, model)
    )
    figure.tight_layout()
    return figure


scaling = written(scaling_figure)


def _lines(cells, along):
    """The cells as lines along one dimension: one per backend and value of
    every other dimension (the machine too), labelled by the backend and
    those values that vary."""
    others = [c for c in cells.columns if c in SETTING_ORDER and c != along]
    varying = [c for c in others if c != "backend" and cells[c].nunique() > 1]
    for key, runs in cells.sort_values(along).groupby(others, sort=True):
        values = dict(zip(others, key))
        label = ", ".join([values["backend"]] + [str(values[c]) for c in varying])
        yield label, runs


THREADS_FIGURE = {
    "train": ("steady_epoch_seconds", "seconds per epoch (steady state)"),
    "infer": ("seconds_per_1000_samples", "seconds per 1,000 samples (batched)"),
}


def threads_scaling_figure(summary, dataset, model):
    """Time against CPU threads per backend (the vCPU comparison), with each
    backend's ideal line (its time on the fewest threads, divided by the
    thread ratio); one panel per machine."""
    cells = workload_rows(summary, dataset, model)
    task = cells["task"].iloc[0] if len(cells) else "train"
    column, ylabel = THREADS_FIGURE[task]
    cells = cells[cells[column].notna() & cells["threads_used"].notna()]
    machines = sorted(cells["machine"].unique()) or ["-"]
    figure, axes = figure_and_axes(
        1, len(machines), figsize=(5.5 * len(machines) + 2.5, 4.5), squeeze=False
    )
    for machine, axis in zip(machines, axes[0]):
        on_machine = cells[cells["machine"] == machine].drop(columns=["threads"])
        on_machine = on_machine.rename(columns={"threads_used": "threads"})
        for label, runs in _lines(on_machine.drop(columns=["machine"]), "threads"):
            threads = runs["threads"].to_numpy(dtype=float)
            seconds = runs[column].to_numpy(dtype=float)
            style = backend_style(runs["backend"].iloc[0])
            axis.plot(threads, seconds, label=label, **style)
            axis.plot(
                threads, seconds[0] * threads[0] / threads, linestyle=":", color=style["color"]
            )
        if len(on_machine):
            axis.plot([], [], linestyle=":", color="gray", label="ideal (time / threads)")
            axis.set_xscale("log", base=2)
            axis.set_yscale("log")
            axis.set_xticks(sorted(set(on_machine["threads"].astype(float))))
            axis.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%d"))
            axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        else:
            axis.text(0.5, 0.5, "no successful run", ha="center", transform=axis.transAxes)
        axis.set_xlabel("CPU threads")
        axis.set_ylabel(ylabel + ", log")
        axis.set_title(machine, fontsize="small")
    if len(cells):
        legend_outside(axes[0][-1])
    figure.suptitle("{} / {}: time against CPU threads".format(dataset, model))
    figure.tight_layout()
    return figure


threads_scaling = written(threads_scaling_figure)
