"""The overview's heat-maps, a backend a row and a workload and setting a
column: each cell's speed relative to the fastest backend's (rule
front_page), and its model FLOP utilisation (rule plot_utilisation)."""

import matplotlib.colors
import numpy as np

from dlbench.analysis.collect import point_labels
from dlbench.analysis.plots_style import SETTING_ORDER, figure_and_axes, written
from dlbench.record.fields import CellStatus


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
