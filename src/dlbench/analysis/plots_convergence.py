"""The workload's convergence figure: training loss and validation accuracy
after every epoch per backend, the repeats' range shaded (rule
plot_convergence)."""

import matplotlib.ticker

from dlbench.analysis.plots_style import (
    backend_style,
    figure_and_axes,
    legend_outside,
    workload_rows,
    written,
)


def convergence_figure(epochs, dataset, model):
    """Training loss and validation accuracy after every epoch per backend:
    median over repeats, the range of the repeats shaded. One row of panels
    per setting (machine, devices, threads) where there are several."""
    rows = workload_rows(epochs, dataset, model)
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
            legend_outside(pair[1])
    figure.suptitle("{} / {}: convergence (Keras solid, native dashed)".format(dataset, model))
    figure.tight_layout()
    return figure


convergence = written(convergence_figure)
