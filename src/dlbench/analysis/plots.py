"""Figures from the collected tables (matplotlib, no display needed).

Each figure is built by a ``<name>_figure`` function that returns the
matplotlib Figure (not kept by pyplot: the caller owns it) and written by
``<name>``, which the workflow's scripts call with the PNG's path; the tests
read the data, labels and titles back from the Figure."""

import matplotlib
import matplotlib.colors
import matplotlib.figure
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from dlbench import catalog
from dlbench.analysis import versions as versions_analysis  # noqa: E402
from dlbench.analysis.collect import labels, point_labels  # noqa: E402
from dlbench.plan import matrix  # noqa: E402
from dlbench.record.fields import MEASURED, CellStatus

# One colour per framework in every figure; Keras solid, native dashed.
FRAMEWORK_COLOURS = {
    "jax": "tab:blue",
    "tensorflow": "tab:orange",
    "cntk": "tab:green",
    "torch": "tab:red",
    "openvino": "tab:purple",
    "theano": "tab:brown",
    "chainer": "tab:pink",
    "pytensor": "tab:olive",
    "mxnet": "tab:cyan",
}
SETTING_ORDER = matrix.cell_columns("dataset", "model", "backend") + ["backend"]


def backend_style(backend):
    """The colour, line style and marker of a backend's lines."""
    entry = catalog.BACKENDS.get(backend, {})
    keras = entry.get("family") == "keras"
    return {
        "color": FRAMEWORK_COLOURS.get(entry.get("framework"), "tab:gray"),
        "linestyle": "-" if keras else "--",
        "marker": "o" if keras else "s",
    }


def figure_and_axes(nrows=1, ncols=1, figsize=None, dpi=120, **options):
    """A figure pyplot does not keep (whoever draws it owns it: the tests read
    back what it shows) and its axes; ``dpi``: the resolution ``save`` writes."""
    figure = matplotlib.figure.Figure(figsize=figsize, dpi=dpi)
    return figure, figure.subplots(nrows, ncols, **options)


def save(figure, output, **options):
    """Write a figure as the workflow does: a PNG at the figure's dpi."""
    figure.savefig(output, dpi=figure.dpi, **options)


def written(figure_of):
    """What the workflow's scripts call: ``figure_of``'s arguments, then the
    PNG's path, to which the figure is written."""

    def write(*arguments):
        *inputs, output = arguments
        save(figure_of(*inputs), output)

    write.__name__ = figure_of.__name__[: -len("_figure")]
    write.__doc__ = "``{}``, written to the path given last.".format(figure_of.__name__)
    return write


def _legend_outside(axis, **options):
    """The legend right of the axes, never over the data."""
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", **options)


def _workload(frame, dataset, model):
    rows = frame[(frame["dataset"] == dataset) & (frame["model"] == model)]
    return rows.assign(setting=point_labels(rows))


def _cell_bars(summary, dataset, model):
    """A workload's cells in a stable order, their bar positions, and a
    figure wide enough for them."""
    cells = _workload(summary, dataset, model).sort_values(SETTING_ORDER)
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


def stacked_bars(cells, parts, xlabel, title, output, empty="nothing to plot"):
    """``stacked_bars_figure``, written to ``output``."""
    save(stacked_bars_figure(cells, parts, xlabel, title, empty), output)


def stacked_bars_figure(cells, parts, xlabel, title, empty="nothing to plot"):
    """One bar per cell (its backend and point), split into ``parts``:
    (column, legend label, colour or None for the next of tab20's)."""
    figure, axis = figure_and_axes(dpi=110, figsize=(11, 1.6 + 0.45 * max(3, len(cells))))
    if len(cells):
        labels = list(cells["backend"] + " (" + point_labels(cells) + ")")
        left = [0.0] * len(cells)
        colours = plt.get_cmap("tab20")
        for index, (column, label, colour) in enumerate(parts):
            values = list(cells[column].fillna(0.0))
            axis.barh(labels, values, left=left, label=label, color=colour or colours(index))
            left = [a + b for a, b in zip(left, values)]
        _legend_outside(axis)
        axis.invert_yaxis()
    else:
        axis.text(0.5, 0.5, empty, ha="center", va="center", transform=axis.transAxes)
    axis.set_xlabel(xlabel)
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
    _legend_outside(axis)
    title = "{} / {}: training time per epoch".format(dataset, model)
    return _label_bars(figure, axis, cells, positions, "seconds per epoch", title)


epoch_time = written(epoch_time_figure)


def convergence_figure(epochs, dataset, model):
    """Training loss and validation accuracy after every epoch per backend:
    median over repeats, the range of the repeats shaded. One row of panels
    per setting (machine, devices, threads) where there are several."""
    rows = _workload(epochs, dataset, model)
    settings = sorted(rows["setting"].unique()) or ["-"]
    figure, axes = figure_and_axes(
        len(settings), 2, figsize=(12, 3.6 * len(settings) + 0.6), squeeze=False
    )
    panels = (("loss", "training loss"), ("val_accuracy", "validation accuracy"))
    for setting, pair in zip(settings, axes):
        for axis, (column, label) in zip(pair, panels):
            values = rows[rows["setting"] == setting].dropna(subset=[column])
            for backend, runs in values.groupby("backend"):
                by_epoch = runs.groupby("epoch")[column]
                median = by_epoch.median()
                style = backend_style(backend)
                axis.plot(median.index, median.to_numpy(), label=backend, **style)
                axis.fill_between(
                    median.index,
                    by_epoch.min().to_numpy(),
                    by_epoch.max().to_numpy(),
                    color=style["color"],
                    alpha=0.12,
                )
            axis.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
            axis.set_xlabel("epoch")
            axis.set_ylabel(label)
            axis.set_title(setting, fontsize="small")
            if not len(values):
                axis.text(0.5, 0.5, "no successful run", ha="center", transform=axis.transAxes)
        if len(rows[rows["setting"] == setting]):
            _legend_outside(pair[1])
    figure.suptitle("{} / {}: convergence (Keras solid, native dashed)".format(dataset, model))
    figure.tight_layout()
    return figure


convergence = written(convergence_figure)


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
    rows = _workload(latencies, dataset, model)
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
    cells = _workload(summary, dataset, model)
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
        _legend_outside(axis)
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
    cells = _workload(summary, dataset, model)
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
        _legend_outside(axes[0][-1])
    figure.suptitle("{} / {}: time against CPU threads".format(dataset, model))
    figure.tight_layout()
    return figure


threads_scaling = written(threads_scaling_figure)


def _label(dataset, model, setting=None):
    text = "{} / {}".format(dataset, model)
    return text if setting is None else "{}\n{}".format(text, setting)


def abstraction_cost_figure(cost):
    """Keras / native per workload and framework: the ratio with its
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
                row["ratio"],
                position,
                xerr=[[row["ratio"] - row["ratio_ci_low"]], [row["ratio_ci_high"] - row["ratio"]]],
                fmt="o",
                capsize=3,
                color=FRAMEWORK_COLOURS.get(framework, "C{}".format(i)),
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
        _legend_outside(axis, title="framework")
    else:
        axis.text(0.5, 0.5, "no Keras / native pair ran", ha="center", transform=axis.transAxes)
    axis.set_yticks(range(len(workloads)))
    axis.set_yticklabels(
        [_label(w["dataset"], w["model"], w["setting"]) for _, w in workloads.iterrows()]
    )
    axis.invert_yaxis()
    axis.set_xlabel("Keras time / native time (log scale; > 1: Keras slower)")
    axis.set_title("Cost of abstraction: Keras vs native, 95 % bootstrap interval")
    figure.tight_layout()
    return figure


abstraction_cost = written(abstraction_cost_figure)


MODE_MARKERS = {"eager": "o", "auto": "s", "compiled": "D"}


def speedups_figure(found):
    """Each precision and compile mode against its backend's float32 eager
    cell (``dlbench.analysis.speedups``): a row per workload and backend, a marker per
    mode with its interval as an error bar, 1 (the baseline) as a line; log
    scale, so 2x slower and 2x faster are the same distance from it."""
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
        _legend_outside(axis, title="precision, compile")
    else:
        axis.text(0.5, 0.5, "no cell to compare", ha="center", transform=axis.transAxes)
    axis.set_yticks(range(len(rows)))
    names = [_label(r.dataset, r.model, r.setting or None) for r in rows.itertuples()]
    axis.set_yticklabels(["{}  {}".format(n, b) for n, b in zip(names, rows["backend"])])
    axis.invert_yaxis()
    axis.set_xlabel("speed-up against float32 eager (log scale; > 1: faster)")
    axis.set_title("Precision and compilation, 95 % bootstrap interval")
    figure.tight_layout()
    return figure


speedups = written(speedups_figure)


def lines_of_code_figure(table):
    """Lines of code per implementation of each workload, as seed 004's
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
        axis.set_title(_label(workload["dataset"], workload["model"]))
        axis.set_ylabel("lines of code")
        axis.legend(fontsize="small")
    if table.empty:
        axes[0][0].set_visible(True)
        axes[0][0].text(0.5, 0.5, "no implementation", ha="center", transform=axes[0][0].transAxes)
    figure.suptitle("Lines of code (blue: Keras, orange: native; solid: model, light: step)")
    figure.tight_layout()
    return figure


lines_of_code = written(lines_of_code_figure)


def _workload_columns(frame):
    """The (dataset, model, devices, accelerator) columns of a backend x
    workload grid, in a stable order, and the backends as its rows."""
    columns = frame.sort_values(["dataset", "model"] + SETTING_ORDER[:-1])
    columns = columns[["dataset", "model", "setting"]].drop_duplicates()
    return list(columns.to_records(index=False)), sorted(frame["backend"].unique())


def _grid(frame, value_and_text, colour_norm, colour_label, title, cmap="RdYlGn_r"):
    """A backend x workload heat-map: ``value_and_text(cell)`` gives each
    cell's colour value (NaN: none) and its annotation."""
    frame = frame.assign(setting=point_labels(frame))
    columns, backends = _workload_columns(frame)
    values = np.full((len(backends), len(columns)), np.nan)
    figure, axis = figure_and_axes(
        dpi=110, figsize=(max(6, 1.25 * len(columns) + 3), max(3, 0.45 * len(backends) + 2))
    )
    for column, (dataset, model, setting) in enumerate(columns):
        cells = frame[
            (frame["dataset"] == dataset)
            & (frame["model"] == model)
            & (frame["setting"] == setting)
        ]
        for _, cell in cells.iterrows():
            row = backends.index(cell["backend"])
            values[row, column], text = value_and_text(cell)
            axis.text(column, row, text, ha="center", va="center", fontsize=8)
    image = axis.imshow(values, cmap=cmap, norm=colour_norm(values), aspect="auto")
    figure.colorbar(image, ax=axis, label=colour_label)
    axis.set_xticks(np.arange(len(columns)))
    axis.set_xticklabels(
        ["{} / {}\n{}".format(d, m, setting) for d, m, setting in columns],
        rotation=30,
        ha="right",
        fontsize=8,
    )
    axis.set_yticks(np.arange(len(backends)))
    axis.set_yticklabels(backends)
    axis.set_title(title)
    figure.tight_layout()
    return figure


def _relative_cell(cell):
    if not np.isfinite(cell["relative_to_fastest"]):
        return np.nan, "n/a" if cell["status"] == CellStatus.NOT_APPLICABLE else cell["status"]
    text = "{:.2f}".format(cell["relative_to_fastest"])
    text += {"slower": "*", "not different": "="}.get(cell["vs_fastest"], "")
    if str(cell["noisy"]) == "True":
        text += "~"
    if isinstance(cell.get("hidden_settings_differ"), str):
        text += "†"
    return cell["relative_to_fastest"], text


def _ratio_norm(values):
    finite = values[np.isfinite(values)]
    top = max(2.0, float(finite.max())) if finite.size else 2.0
    return matplotlib.colors.LogNorm(vmin=1.0, vmax=top)


def relative_speed_figure(summary):
    """Backend x workload heat-map of each cell's headline over the fastest
    backend's on the same workload and hardware (1 = fastest; log colour
    scale). Cells without a figure say why; significance and NOISY marks
    follow the summary."""
    return _grid(
        summary,
        _relative_cell,
        _ratio_norm,
        "time / fastest backend's time (log scale)",
        "Relative speed: headline figure / fastest on the same workload and hardware\n"
        "* significantly slower, = not significantly different, ~ noisy, "
        "† hidden settings differ; blank: not run",
    )


relative_speed = written(relative_speed_figure)


def _utilisation_cell(cell):
    if not np.isfinite(cell["mfu"]):
        return np.nan, "{:.3g}\nGFLOP/s".format(cell["achieved_gflops"])
    return cell["mfu"], "{:.1%}".format(cell["mfu"])


def _utilisation_norm(values):
    finite = values[np.isfinite(values)]
    top = float(finite.max()) if finite.size else 1.0
    return matplotlib.colors.Normalize(vmin=0, vmax=max(1.0, top))


def utilisation_figure(table):
    """Backend x workload heat-map of model FLOP utilisation (green: high)."""
    return _grid(
        table,
        _utilisation_cell,
        _utilisation_norm,
        "model FLOP utilisation (achieved / peak)",
        "Model FLOP utilisation: analytic FLOPs x samples per second / peak\n"
        "(GPU: FP32 datasheet peak; CPU: the machine's float32 matmul probe)",
        cmap="RdYlGn",
    )


utilisation = written(utilisation_figure)


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
        _legend_outside(axis, title="the change")
    else:
        axis.text(0.5, 0.5, "no two versions to compare", ha="center", transform=axis.transAxes)
    axis.set_yticks(range(len(found)))
    axis.set_yticklabels(
        [
            "{}  {}: {} -> {}".format(
                _label(r.dataset, r.model, r.setting or None),
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
