"""One figure per workload (rules plot_epoch_time, plot_convergence, plot_latency,
plot_throughput, plot_scaling)."""

import sys

import pandas as pd

from dlbench import plots

PLOTTERS = {
    "plot_epoch_time": plots.epoch_time,
    "plot_convergence": plots.convergence,
    "plot_latency": plots.latency,
    "plot_throughput": plots.throughput,
    "plot_scaling": plots.scaling,
}

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS[snakemake.rule](
    pd.read_csv(snakemake.input[0]),
    snakemake.wildcards.dataset,
    snakemake.wildcards.model,
    snakemake.output[0],
)
