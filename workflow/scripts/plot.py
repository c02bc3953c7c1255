"""One figure per workload (rules plot_epoch_time, plot_convergence, plot_latency,
plot_throughput, plot_scaling, plot_threads_scaling)."""

import sys

from dlbench.analysis import collect, plots_convergence, plots_timings

PLOTTERS = {
    "plot_epoch_time": plots_timings.epoch_time,
    "plot_convergence": plots_convergence.convergence,
    "plot_latency": plots_timings.latency,
    "plot_throughput": plots_timings.throughput,
    "plot_scaling": plots_timings.scaling,
    "plot_threads_scaling": plots_timings.threads_scaling,
}

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS[snakemake.rule](
    collect.read_table(snakemake.input[0]),
    snakemake.wildcards.dataset,
    snakemake.wildcards.model,
    snakemake.output[0],
)
