"""Collected tables -> Keras / native ratios with intervals (rule abstraction_cost)."""

import sys

import pandas as pd

from dlbench import abstraction, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
cost = abstraction.abstraction_cost(
    pd.read_csv(snakemake.input.metrics),
    pd.read_csv(snakemake.input.epochs),
    pd.read_csv(snakemake.input.latencies),
)
shown = abstraction.table(cost)
title = "Cost of abstraction (Keras / native)"
tables.write(snakemake.output, cost, title, abstraction.CAPTION, shown=shown)
print(shown.to_string())
