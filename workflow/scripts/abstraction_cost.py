"""Collected tables -> Keras / native slowdowns with intervals (rule abstraction_cost)."""

import sys

from dlbench.analysis import abstraction, collect, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
cost = abstraction.abstraction_cost(
    collect.read_table(snakemake.input.metrics),
    collect.read_table(snakemake.input.epochs),
    collect.read_table(snakemake.input.latencies),
)
shown = abstraction.table(cost)
title = "Cost of abstraction (Keras / native)"
tables.write(snakemake.output, cost, title, abstraction.CAPTION, shown=shown)
print(shown.to_string())
