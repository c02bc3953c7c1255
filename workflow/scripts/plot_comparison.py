"""Comparison figures (rules plot_abstraction_cost, plot_lines_of_code, plot_speedups,
plot_versions, plot_version_history)."""

import sys

from dlbench.analysis import collect, plots_comparisons

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS = {
    "plot_abstraction_cost": plots_comparisons.abstraction_cost,
    "plot_lines_of_code": plots_comparisons.lines_of_code,
    "plot_speedups": plots_comparisons.speedups,
    "plot_versions": plots_comparisons.versions,
    "plot_version_history": plots_comparisons.version_history,
}
PLOTTERS[snakemake.rule](collect.read_table(snakemake.input[0]), snakemake.output[0])
