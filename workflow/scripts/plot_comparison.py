"""Keras vs native figures (rule plot_comparison)."""

import sys

import pandas as pd

from dlbench import plots

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS = {"abstraction_cost": plots.abstraction_cost, "lines_of_code": plots.lines_of_code}
PLOTTERS[snakemake.wildcards.comparison](pd.read_csv(snakemake.input[0]), snakemake.output[0])
