"""Summary -> the published-style table of one workload (rule workload_table)."""

import sys

from dlbench.analysis import collect, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
dataset, model = snakemake.wildcards.dataset, snakemake.wildcards.model
checks = collect.read_table(snakemake.input.checks) if "checks" in snakemake.input.keys() else None
summary = collect.read_table(snakemake.input.summary)
table, task = tables.workload_table(summary, dataset, model, checks)
title = "{} / {}".format(dataset, model)
tables.write(snakemake.output, table, title, tables.TABLE_CAPTIONS[task])
