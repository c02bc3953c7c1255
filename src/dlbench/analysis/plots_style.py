"""What every figure shares: a framework's colour and a backend's line
style, the figure pyplot does not keep, the legend's place, a workload's
rows and label, and writing a figure as the workflow does (``save``; the
scripts' writers, ``written``).

Each figure is built by a ``<name>_figure`` function that returns the
matplotlib Figure (not kept by pyplot: the caller owns it) and written by
``<name> = written(<name>_figure)``, which the workflow's scripts call with
the PNG's path; the tests read the data, labels and titles back from the
Figure."""

import matplotlib
import matplotlib.figure

matplotlib.use("Agg")

from dlbench import catalog  # noqa: E402
from dlbench.analysis.collect import point_labels  # noqa: E402
from dlbench.plan import matrix  # noqa: E402

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


def legend_outside(axis, **options):
    """The legend right of the axes, never over the data."""
    axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", **options)


def workload_rows(frame, dataset, model):
    """The workload's rows, each with its point's label as ``setting``."""
    rows = frame[(frame["dataset"] == dataset) & (frame["model"] == model)]
    return rows.assign(setting=point_labels(rows))


def workload_label(dataset, model, setting=None):
    """A workload's name on an axis, its setting on a line below where given."""
    text = "{} / {}".format(dataset, model)
    return text if setting is None else "{}\n{}".format(text, setting)
