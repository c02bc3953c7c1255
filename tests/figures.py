"""What a figure shows, read back from its matplotlib objects: the bars'
heights, the lines' points, the labels and titles. The plotting functions
build their figure apart from writing it (the ``dlbench.analysis.plots_*``
modules' ``*_figure``, the other analysis modules' ``figure_of``), so that a test
looks at the data a figure draws, not at a PNG's existence; ``png_shows``
says that a written PNG is that figure."""

import io

import numpy as np
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.image import imread

from dlbench.analysis import plots_style


def tick_labels(axis, which="x"):
    """The tick labels' texts along ``which`` ("x" or "y")."""
    return [label.get_text() for label in getattr(axis, "get_{}ticklabels".format(which))()]


def bars(axis):
    """{container's label: [(x, y, width, height) of each bar]}; bars drawn
    without a label are named ``_container<n>`` by matplotlib."""
    return {
        container.get_label(): [
            (patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height())
            for patch in container.patches
        ]
        for container in axis.containers
        if isinstance(container, BarContainer)
    }


def heights(axis, label=None):
    """The heights of the bars of the container ``label`` (the only one where
    None)."""
    found = bars(axis)
    if label is None:
        (label,) = found
    return [height for _, _, _, height in found[label]]


def widths(axis, label):
    """The widths of the horizontal bars of the container ``label``."""
    return [width for _, _, width, _ in bars(axis)[label]]


def error_bars(container):
    """[(low, high)] of each error bar of a BarContainer or ErrorbarContainer,
    along the axis its bars run (vertical segments: y, horizontal: x)."""
    errors = container.errorbar if isinstance(container, BarContainer) else container
    spans = []
    for collection in errors.lines[2]:
        for (x0, y0), (x1, y1) in collection.get_segments():
            spans.append((min(y0, y1), max(y0, y1)) if x0 == x1 else (min(x0, x1), max(x0, x1)))
    return spans


def lines(axis):
    """{label: (x data, y data)} of the axis' lines that have a legend entry
    (matplotlib gives the others a label starting with "_")."""
    return {
        line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
        for line in axis.get_lines()
        if not line.get_label().startswith("_")
    }


def points(axis):
    """{label: (x, y)} of the axis' error-bar series (``errorbar``): their
    markers' positions."""
    found = {}
    for container in axis.containers:
        if isinstance(container, ErrorbarContainer) and container.lines[0] is not None:
            line = container.lines[0]
            found[container.get_label()] = (list(line.get_xdata()), list(line.get_ydata()))
    return found


def horizontal_segments(axis):
    """The y of every horizontal two-point line of the axis (a box plot's
    medians, quartiles' edges and caps)."""
    found = []
    for line in axis.get_lines():
        y = np.asarray(line.get_ydata(), dtype=float)
        if len(y) == 2 and y[0] == y[1]:
            found.append(float(y[0]))
    return found


def texts(axis_or_figure):
    """The texts written on the axes or figure (annotations included, the
    titles and tick labels not)."""
    return [text.get_text() for text in axis_or_figure.texts]


def visible_axes(figure):
    """The figure's panels that are shown (colour bars included)."""
    return [axis for axis in figure.axes if axis.get_visible()]


def png_of(figure, **options):
    """The pixels of the figure as ``plots_style.save`` writes it."""
    buffer = io.BytesIO()
    plots_style.save(figure, buffer, format="png", **options)
    buffer.seek(0)
    return imread(buffer, format="png")


def png_shows(path, figure, **options):
    """Whether the PNG at ``path`` is ``figure``, pixel for pixel, as
    ``plots_style.save`` writes it (with the same ``options``)."""
    written = imread(path, format="png")
    drawn = png_of(figure, **options)
    return written.shape == drawn.shape and bool(np.array_equal(written, drawn))
