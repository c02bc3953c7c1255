"""Single-sample latency per backend (rule plot_latency)."""

import sys

import pandas as pd

from dlbench import plots

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
plots.latency(
    pd.read_csv(snakemake.input[0]),
    snakemake.wildcards.dataset,
    snakemake.wildcards.model,
    snakemake.output[0],
)
