"""Seconds per epoch by backend with error bars (rule plot_epoch_time)."""

import sys

import pandas as pd

from dlbench import plots

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
plots.epoch_time(
    pd.read_csv(snakemake.input[0]),
    snakemake.wildcards.dataset,
    snakemake.wildcards.model,
    snakemake.output[0],
)
