"""One figure per workload (rules plot_epoch_time, plot_convergence, plot_latency,
plot_throughput, plot_scaling, plot_threads_scaling)."""

import sys

from dlbench.analysis import collect, plots

PLOTTERS = {
    "plot_epoch_time": plots.epoch_time,
    "plot_convergence": plots.convergence,
    "plot_latency": plots.latency,
    "plot_throughput": plots.throughput,
    "plot_scaling": plots.scaling,
    "plot_threads_scaling": plots.threads_scaling,
}

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS[snakemake.rule](
    collect.read_table(snakemake.input[0]),
    snakemake.wildcards.dataset,
    snakemake.wildcards.model,
    snakemake.output[0],
)
