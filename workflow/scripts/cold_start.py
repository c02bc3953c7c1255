"""Metrics -> the time-to-first-step table (rule cold_start) and its plot
(rule plot_cold_start)."""

import sys

from dlbench.analysis import cold_start, collect, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
if snakemake.rule == "plot_cold_start":
    cold_start.plot(collect.read_table(snakemake.input[0]), snakemake.output[0])
else:
    found = cold_start.table(collect.read_table(snakemake.input[0]))
    shown = cold_start.shown(found)
    tables.write(snakemake.output, found, "Time to first step", cold_start.CAPTION, shown=shown)
