"""The workload's time-to-accuracy figure: the validation metric against
the training seconds, each seed a thin line, the median over the seeds a
thick one per backend, the target a horizontal line (rule
plot_time_to_accuracy)."""

from typing import Optional

import matplotlib.figure
import matplotlib.ticker
import pandas as pd

from dlbench.analysis import collect
from dlbench.analysis.plots_style import (
    backend_style,
    figure_and_axes,
    legend_outside,
    point_labels,
    written,
)
from dlbench.analysis.time_to_accuracy import METRICS

# The x axis is logarithmic where the first epoch (its compiles) takes this
# share or more of a run's training seconds: the later steps would crowd at
# the right edge otherwise.
FIRST_EPOCH_DOMINATES = 0.5
TARGET_STYLE = {"color": "black", "linestyle": ":", "linewidth": 1.2}


def first_epoch_dominates(runs: pd.DataFrame) -> bool:
    """Whether the runs' median first epoch is ``FIRST_EPOCH_DOMINATES`` of
    their median training seconds at the last evaluation, or more."""
    first = runs["first_epoch_seconds"].dropna()
    last = runs["last_seconds"].dropna()
    if not len(first) or not len(last) or not last.median():
        return False
    return bool(first.median() >= FIRST_EPOCH_DOMINATES * last.median())


def time_to_accuracy_figure(
    evaluations: pd.DataFrame, runs: pd.DataFrame, dataset: str, model: str
) -> matplotlib.figure.Figure:
    """The validation metric after every evaluation against the training
    seconds so far, one panel per point (machine, devices, ...) of the
    workload: per backend each seed a thin line and the median over the
    seeds (of the metric and of the seconds at each step) a thick one with
    the backend's name, the target a dotted horizontal line; ``runs`` is
    ``time_to_accuracy.per_run``'s table (the target, which runs count)."""
    chosen = runs[
        (runs["dataset"] == dataset) & (runs["model"] == model) & runs["counted"].astype(bool)
    ]
    metric = str(chosen["metric"].iloc[0]) if len(chosen) else "val_accuracy"
    curves = evaluations.merge(
        chosen[collect.RUN + ["accelerator", "target", "first_epoch_seconds", "last_seconds"]],
        on=collect.RUN,
    )
    curves = curves.assign(setting=point_labels(curves))
    settings = sorted(curves["setting"].unique()) or ["-"]
    figure, axes = figure_and_axes(
        len(settings), 1, figsize=(9, 3.8 * len(settings) + 0.6), squeeze=False
    )
    for setting, (axis,) in zip(settings, axes):
        rows = curves[curves["setting"] == setting]
        log = first_epoch_dominates(rows.drop_duplicates(collect.RUN))
        if log:  # step 0 has no place on a log axis
            rows = rows[rows["training_seconds"] > 0]
        for backend, seeds in rows.groupby("backend"):
            style = backend_style(backend)
            line = {"color": style["color"], "linestyle": style["linestyle"]}
            for _, seed in seeds.groupby("repeat"):
                axis.plot(
                    seed["training_seconds"].to_numpy(),
                    seed[metric].to_numpy(),
                    linewidth=0.8,
                    alpha=0.35,
                    label="_seed",
                    **line,
                )
            median = seeds.groupby("step")[["training_seconds", metric]].median()
            axis.plot(
                median["training_seconds"].to_numpy(),
                median[metric].to_numpy(),
                linewidth=2.2,
                label=backend,
                **line,
            )
        target = _target(rows)
        if target is not None:
            axis.axhline(target, label="target {:.4g}".format(target), **TARGET_STYLE)
        if log:
            axis.set_xscale("log")
            # seconds as plain numbers (3, 10, 30), not 3 x 10^0; minor ticks labelled
            # only where few decades leave room
            axis.xaxis.set_major_formatter(matplotlib.ticker.LogFormatter())
            axis.xaxis.set_minor_formatter(matplotlib.ticker.LogFormatter(labelOnlyBase=False))
        axis.set_xlabel(
            "training seconds (first epoch's compiles included{})".format(
                "; log scale: the first epoch dominates" if log else ""
            )
        )
        axis.set_ylabel(METRICS.get(metric, metric))
        axis.set_title(setting, fontsize="small")
        if len(rows):
            legend_outside(axis)
        else:
            axis.text(0.5, 0.5, "no evaluated run", ha="center", transform=axis.transAxes)
    figure.suptitle(
        "{} / {}: time to accuracy (each seed thin, the median thick)".format(dataset, model)
    )
    figure.tight_layout()
    return figure


def _target(rows: pd.DataFrame) -> Optional[float]:
    found = rows["target"].dropna()
    return float(found.iloc[0]) if len(found) else None


time_to_accuracy = written(time_to_accuracy_figure)
