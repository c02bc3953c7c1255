"""Summary -> the published-style table of one workload (rule workload_table)."""

import sys

from dlbench import collect, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
dataset, model = snakemake.wildcards.dataset, snakemake.wildcards.model
table, task = tables.workload_table(collect.read_table(snakemake.input[0]), dataset, model)
title = "{} / {}".format(dataset, model)
tables.write(snakemake.output, table, title, tables.TABLE_CAPTIONS[task])
