"""Summary + analytic FLOPs -> achieved FLOP/s and MFU (rule utilisation)."""

import sys

import pandas as pd

from dlbench import collect, flops, tables, utilisation

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
per_sample = {
    (dataset, model): flops.per_sample_of(path, model)
    for (dataset, model), path in zip(snakemake.params.workloads, snakemake.input.data)
}
table = utilisation.table(
    collect.read_table(snakemake.input.summary),
    collect.read_table(snakemake.input.metrics),
    per_sample,
    pd.read_csv(snakemake.input.peaks),
)
tables.write(
    snakemake.output,
    table,
    "FLOPs and utilisation",
    utilisation.CAPTION,
    shown=utilisation.shown(table),
)
