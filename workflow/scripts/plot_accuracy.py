"""Accuracy against epoch per backend (rule plot_accuracy)."""

import sys

import pandas as pd

from dlbench import plots

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
plots.accuracy(
    pd.read_csv(snakemake.input[0]),
    snakemake.wildcards.dataset,
    snakemake.wildcards.model,
    snakemake.output[0],
)
