"""One bar per cell split into its parts, the parts stacked: the figure of
where a step's time goes (dlbench.analysis.python_stacks, op_profiles)."""

import matplotlib

from dlbench.analysis.collect import point_labels
from dlbench.analysis.plots_style import figure_and_axes, legend_outside, save


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
        colours = matplotlib.colormaps["tab20"]
        for index, (column, label, colour) in enumerate(parts):
            values = list(cells[column].fillna(0.0))
            axis.barh(labels, values, left=left, label=label, color=colour or colours(index))
            left = [a + b for a, b in zip(left, values)]
        legend_outside(axis)
        axis.invert_yaxis()
    else:
        axis.text(0.5, 0.5, empty, ha="center", va="center", transform=axis.transAxes)
    axis.set_xlabel(xlabel)
    axis.set_title(title)
    figure.tight_layout()
    return figure
