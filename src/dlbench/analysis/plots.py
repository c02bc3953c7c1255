"""Every figure by the name its callers use (``plots.<name>``,
``plots.<name>_figure``, ``plots.save``), gathered from the modules that
draw them: plots_style (colours, styles, ``written``, ``save``),
plots_timings, plots_convergence, plots_comparisons, plots_heat_maps,
plots_stacked_bars. The tests and the other analysis modules import it;
the workflow's scripts import the module that draws their figures. Those
modules never import this one."""

from dlbench.analysis.plots_comparisons import (
    MODE_MARKERS,
    abstraction_cost,
    abstraction_cost_figure,
    lines_of_code,
    lines_of_code_figure,
    speedups,
    speedups_figure,
    versions,
    versions_figure,
)
from dlbench.analysis.plots_convergence import convergence, convergence_figure
from dlbench.analysis.plots_heat_maps import (
    relative_speed,
    relative_speed_figure,
    utilisation,
    utilisation_figure,
)
from dlbench.analysis.plots_stacked_bars import stacked_bars, stacked_bars_figure
from dlbench.analysis.plots_style import (
    FRAMEWORK_COLOURS,
    SETTING_ORDER,
    backend_style,
    figure_and_axes,
    save,
    written,
)
from dlbench.analysis.plots_timings import (
    THREADS_FIGURE,
    epoch_time,
    epoch_time_figure,
    latency,
    latency_figure,
    scaling,
    scaling_figure,
    threads_scaling,
    threads_scaling_figure,
    throughput,
    throughput_figure,
)

__all__ = [
    "FRAMEWORK_COLOURS",
    "MODE_MARKERS",
    "SETTING_ORDER",
    "THREADS_FIGURE",
    "abstraction_cost",
    "abstraction_cost_figure",
    "backend_style",
    "convergence",
    "convergence_figure",
    "epoch_time",
    "epoch_time_figure",
    "figure_and_axes",
    "latency",
    "latency_figure",
    "lines_of_code",
    "lines_of_code_figure",
    "relative_speed",
    "relative_speed_figure",
    "save",
    "scaling",
    "scaling_figure",
    "speedups",
    "speedups_figure",
    "stacked_bars",
    "stacked_bars_figure",
    "threads_scaling",
    "threads_scaling_figure",
    "throughput",
    "throughput_figure",
    "utilisation",
    "utilisation_figure",
    "versions",
    "versions_figure",
    "written",
]
