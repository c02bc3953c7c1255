"""Comparison figures (rules plot_abstraction_cost, plot_lines_of_code, plot_speedups,
plot_versions)."""

import sys

from dlbench.analysis import collect, plots

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS = {
    "plot_abstraction_cost": plots.abstraction_cost,
    "plot_lines_of_code": plots.lines_of_code,
    "plot_speedups": plots.speedups,
    "plot_versions": plots.versions,
}
PLOTTERS[snakemake.rule](collect.read_table(snakemake.input[0]), snakemake.output[0])
