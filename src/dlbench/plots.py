"""Figures from the collected tables (matplotlib, no display needed)."""

import matplotlib
import matplotlib.colors
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dlbench.collect import NOT_APPLICABLE, device_label  # noqa: E402


def _workload(frame, dataset, model):
    return frame[(frame["dataset"] == dataset) & (frame["model"] == model)]


def _cell_bars(summary, dataset, model):
    """A workload's cells in a stable order, their bar positions, and a
    figure wide enough for them."""
    cells = _workload(summary, dataset, model).sort_values(["devices", "backend"])
    figure, axis = plt.subplots(figsize=(max(5, 1.6 * len(cells) + 2), 4))
    return cells, np.arange(len(cells)), figure, axis


def _finish_bars(figure, axis, cells, positions, ylabel, title, output):
    """Label the bars, name every cell without a value (failed, timeout,
    n/a) where its bar would be, and write the figure."""
    for position, (_, cell) in zip(positions, cells.iterrows()):
        if cell["status"] not in ("ok", "partial"):
            status = "n/a" if cell["status"] == NOT_APPLICABLE else cell["status"]
            axis.text(position, 0, status, ha="center", va="bottom", color="tab:red", rotation=90)
    axis.set_xticks(positions)
    axis.set_xticklabels(
        [
            "{}\n{}".format(b, device_label(d, a))
            for b, d, a in zip(cells["backend"], cells["devices"], cells["accelerator"])
        ]
    )
    axis.set_ylabel(ylabel)
    axis.set_title(title)
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def epoch_time(summary, dataset, model, output):
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
    axis.legend(fontsize="small")
    title = "{} / {}: training time per epoch".format(dataset, model)
    _finish_bars(figure, axis, cells, positions, "seconds per epoch", title, output)


def convergence(epochs, dataset, model, output):
    """Training loss and validation accuracy after every epoch per backend:
    median over repeats, the range of the repeats shaded."""
    rows = _workload(epochs, dataset, model)
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    panels = (("loss", "training loss"), ("val_accuracy", "validation accuracy"))
    for axis, (column, label) in zip(axes, panels):
        values = rows.dropna(subset=[column])
        for (backend, devices, accelerator), runs in values.groupby(
            ["backend", "devices", "accelerator"]
        ):
            by_epoch = runs.groupby("epoch")[column]
            median = by_epoch.median()
            (line,) = axis.plot(
                median.index,
                median.to_numpy(),
                marker="o",
                label="{} ({})".format(backend, device_label(devices, accelerator)),
            )
            axis.fill_between(
                median.index,
                by_epoch.min().to_numpy(),
                by_epoch.max().to_numpy(),
                color=line.get_color(),
                alpha=0.15,
            )
        axis.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        axis.set_xlabel("epoch")
        axis.set_ylabel(label)
        if len(values):
            axis.legend(fontsize="small")
        else:
            axis.text(0.5, 0.5, "no successful run", ha="center", transform=axis.transAxes)
    figure.suptitle("{} / {}: convergence".format(dataset, model))
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def throughput(summary, dataset, model, output):
    """Seconds per 1,000 samples at the workload's batch size per backend
    (median over repeats), as the published feature-extraction table."""
    cells, positions, figure, axis = _cell_bars(summary, dataset, model)
    seconds = cells["seconds_per_1000_samples"].astype(float).to_numpy()
    axis.bar(positions, seconds, color="tab:green")
    title = "{} / {}: batched inference".format(dataset, model)
    _finish_bars(figure, axis, cells, positions, "seconds per 1,000 samples", title, output)


def latency(latencies, dataset, model, output):
    """Single-sample inference latency per backend: every timed call of
    every repeat, as a box (median, quartiles, 1.5 IQR whiskers)."""
    rows = _workload(latencies, dataset, model)
    groups = [
        (key, runs["ms"].to_numpy())
        for key, runs in rows.groupby(["backend", "devices", "accelerator"])
    ]
    figure, axis = plt.subplots(figsize=(max(5, 1.6 * len(groups) + 2), 4))
    if groups:
        axis.boxplot(
            [values for _, values in groups],
            tick_labels=["{}\n{}".format(b, device_label(d, a)) for (b, d, a), _ in groups],
            showfliers=True,
        )
        axis.set_yscale("log")
    else:
        axis.text(0.5, 0.5, "no successful run", ha="center", transform=axis.transAxes)
    axis.set_ylabel("latency of one sample (ms, log scale)")
    axis.set_title("{} / {}: inference latency, batch 1".format(dataset, model))
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def scaling(summary, dataset, model, output):
    """Training throughput against device count per backend, with each
    backend's ideal line (its throughput on the fewest devices, times the
    device ratio) and the scaling efficiency written at every point."""
    cells = _workload(summary, dataset, model)
    cells = cells[(cells["devices"] > 0) & cells["samples_per_second"].notna()]
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for backend, runs in cells.sort_values("devices").groupby("backend"):
        devices = runs["devices"].to_numpy()
        throughput = runs["samples_per_second"].to_numpy(dtype=float)
        (line,) = axis.plot(devices, throughput, marker="o", label=backend)
        ideal = throughput[0] * devices / devices[0]
        axis.plot(devices, ideal, linestyle="--", color=line.get_color(), alpha=0.6)
        for x, y, efficiency in zip(devices, throughput, runs["scaling_efficiency"]):
            if efficiency == efficiency:  # not NaN
                axis.annotate(
                    "{:.0%}".format(efficiency), (x, y), textcoords="offset points", xytext=(4, 4)
                )
    if len(cells):
        axis.plot([], [], linestyle="--", color="gray", label="ideal (linear) scaling")
        axis.legend(fontsize="small")
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
    figure.savefig(output, dpi=120)
    plt.close(figure)


def _label(dataset, model, devices=None, accelerator=None):
    text = "{} / {}".format(dataset, model)
    return text if devices is None else "{}\n{}".format(text, device_label(devices, accelerator))


def abstraction_cost(cost, output):
    """Keras / native per workload and framework: the ratio with its
    interval as an error bar, 1 (no cost) as a line; log scale, so 2x
    slower and 2x faster are the same distance from it."""
    workloads = cost[["dataset", "model", "devices", "accelerator"]].drop_duplicates()
    frameworks = sorted(set(cost["framework"]))
    figure, axis = plt.subplots(figsize=(8, max(3, 0.9 * len(workloads) + 1.5)))
    step = 0.8 / max(1, len(frameworks))
    for i, framework in enumerate(frameworks):
        rows = cost[cost["framework"] == framework]
        label = framework
        for j, (_, workload) in enumerate(workloads.iterrows()):
            match = rows[
                (rows["dataset"] == workload["dataset"])
                & (rows["model"] == workload["model"])
                & (rows["devices"] == workload["devices"])
            ]
            if match.empty:
                continue
            row = match.iloc[0]
            position = j - 0.4 + step * (i + 0.5)
            axis.errorbar(
                row["ratio"],
                position,
                xerr=[[row["ratio"] - row["ratio_ci_low"]], [row["ratio_ci_high"] - row["ratio"]]],
                fmt="o",
                capsize=3,
                color="C{}".format(i),
                label=label,
            )
            label = None  # one legend entry per framework
            axis.annotate(
                "{:.2f}".format(row["ratio"]),
                (row["ratio"], position),
                textcoords="offset points",
                xytext=(6, -3),
                fontsize="small",
            )
    if len(cost):
        axis.axvline(1.0, color="gray", linestyle="--", linewidth=1)
        axis.set_xscale("log")
        axis.legend(title="framework", fontsize="small")
    else:
        axis.text(0.5, 0.5, "no Keras / native pair ran", ha="center", transform=axis.transAxes)
    axis.set_yticks(range(len(workloads)))
    axis.set_yticklabels(
        [
            _label(w["dataset"], w["model"], w["devices"], w["accelerator"])
            for _, w in workloads.iterrows()
        ]
    )
    axis.invert_yaxis()
    axis.set_xlabel("Keras time / native time (log scale; > 1: Keras slower)")
    axis.set_title("Cost of abstraction: Keras vs native, 95 % bootstrap interval")
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def lines_of_code(table, output):
    """Lines of code per implementation of each workload, as seed 004's
    figure: a bar per backend, the model's definition and the training or
    inference step stacked."""
    workloads = table[["dataset", "model", "task"]].drop_duplicates()
    columns = max(1, min(4, len(workloads)))
    rows_of_panels = max(1, -(-len(workloads) // columns))
    figure, axes = plt.subplots(
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
            rows["step_lines"],
            bottom=rows["model_lines"],
            color=colours,
            alpha=0.45,
            label="{} step".format("training" if workload["task"] == "train" else "inference"),
        )
        for position, total in zip(positions, rows["lines"]):
            axis.text(position, total, str(total), ha="center", va="bottom", fontsize="small")
        axis.set_xticks(positions)
        axis.set_xticklabels(rows["backend"], rotation=45, ha="right")
        axis.set_title(_label(workload["dataset"], workload["model"]))
        axis.set_ylabel("lines of code")
        axis.legend(fontsize="small")
    if table.empty:
        axes[0][0].set_visible(True)
        axes[0][0].text(0.5, 0.5, "no implementation", ha="center", transform=axes[0][0].transAxes)
    figure.suptitle("Lines of code (blue: Keras, orange: native; solid: model, light: step)")
    figure.tight_layout()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def _workload_columns(frame):
    """The (dataset, model, devices, accelerator) columns of a backend x
    workload grid, in a stable order, and the backends as its rows."""
    columns = frame[["dataset", "model", "devices", "accelerator"]].drop_duplicates()
    columns = columns.sort_values(["dataset", "model", "devices"]).to_records(index=False)
    return list(columns), sorted(frame["backend"].unique())


def _grid(frame, value_and_text, colour_norm, colour_label, title, output, cmap="RdYlGn_r"):
    """A backend x workload heat-map: ``value_and_text(cell)`` gives each
    cell's colour value (NaN: none) and its annotation."""
    columns, backends = _workload_columns(frame)
    values = np.full((len(backends), len(columns)), np.nan)
    figure, axis = plt.subplots(
        figsize=(max(6, 1.25 * len(columns) + 3), max(3, 0.45 * len(backends) + 2))
    )
    for column, (dataset, model, devices, _) in enumerate(columns):
        cells = frame[
            (frame["dataset"] == dataset)
            & (frame["model"] == model)
            & (frame["devices"] == devices)
        ]
        for _, cell in cells.iterrows():
            row = backends.index(cell["backend"])
            values[row, column], text = value_and_text(cell)
            axis.text(column, row, text, ha="center", va="center", fontsize=8)
    image = axis.imshow(values, cmap=cmap, norm=colour_norm(values), aspect="auto")
    figure.colorbar(image, ax=axis, label=colour_label)
    axis.set_xticks(np.arange(len(columns)))
    axis.set_xticklabels(
        ["{} / {}\n{}".format(d, m, device_label(n, a)) for d, m, n, a in columns],
        rotation=30,
        ha="right",
        fontsize=8,
    )
    axis.set_yticks(np.arange(len(backends)))
    axis.set_yticklabels(backends)
    axis.set_title(title)
    figure.tight_layout()
    figure.savefig(output, dpi=110)
    plt.close(figure)


def _relative_cell(cell):
    if not np.isfinite(cell["relative_to_fastest"]):
        return np.nan, "n/a" if cell["status"] == NOT_APPLICABLE else cell["status"]
    text = "{:.2f}".format(cell["relative_to_fastest"])
    text += {"slower": "*", "not different": "="}.get(cell["vs_fastest"], "")
    if str(cell["noisy"]) == "True":
        text += "~"
    return cell["relative_to_fastest"], text


def _ratio_norm(values):
    finite = values[np.isfinite(values)]
    top = max(2.0, float(finite.max())) if finite.size else 2.0
    return matplotlib.colors.LogNorm(vmin=1.0, vmax=top)


def relative_speed(summary, output):
    """Backend x workload heat-map of each cell's headline over the fastest
    backend's on the same workload and hardware (1 = fastest; log colour
    scale). Cells without a figure say why; significance and NOISY marks
    follow the summary."""
    _grid(
        summary,
        _relative_cell,
        _ratio_norm,
        "time / fastest backend's time (log scale)",
        "Relative speed: headline figure / fastest on the same workload and hardware\n"
        "* significantly slower, = not significantly different, ~ noisy; blank: not run",
        output,
    )


def _utilisation_cell(cell):
    if not np.isfinite(cell["mfu"]):
        return np.nan, "{:.3g}\nGFLOP/s".format(cell["achieved_gflops"])
    return cell["mfu"], "{:.1%}".format(cell["mfu"])


def _utilisation_norm(values):
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 1.0
    return matplotlib.colors.Normalize(vmin=0, vmax=max(1.0, top))


def utilisation(table, output):
    """Backend x workload heat-map of model FLOP utilisation (green: high)."""
    _grid(
        table,
        _utilisation_cell,
        _utilisation_norm,
        "model FLOP utilisation (achieved / peak)",
        "Model FLOP utilisation: analytic FLOPs x samples per second / peak\n"
        "(GPU: FP32 datasheet peak; CPU: the machine's float32 matmul probe)",
        output,
        cmap="RdYlGn",
    )
