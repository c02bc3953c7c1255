"""Summary -> the published-style table of one workload (rule workload_table)."""

import sys

import pandas as pd

from dlbench import collect

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
dataset, model = snakemake.wildcards.dataset, snakemake.wildcards.model
table, task = collect.workload_table(pd.read_csv(snakemake.input[0]), dataset, model)
table.to_csv(snakemake.output.csv, index=False)
with open(snakemake.output.markdown, "w") as handle:
    handle.write(collect.markdown(table, dataset, model, collect.TABLE_CAPTIONS[task]))
