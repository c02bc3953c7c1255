"""One figure per workload (rules plot_epoch_time, plot_accuracy, plot_latency)."""

import sys

import pandas as pd

from dlbench import plots

PLOTTERS = {
    "plot_epoch_time": plots.epoch_time,
    "plot_accuracy": plots.accuracy,
    "plot_latency": plots.latency,
}

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS[snakemake.rule](
    pd.read_csv(snakemake.input[0]),
    snakemake.wildcards.dataset,
    snakemake.wildcards.model,
    snakemake.output[0],
)
