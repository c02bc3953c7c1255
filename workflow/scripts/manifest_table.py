"""Run metrics -> each backend's hidden settings (rule manifest_table)."""

import sys

from dlbench.analysis import collect, hidden_settings, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = hidden_settings.table(collect.read_table(snakemake.input[0]))
tables.write(snakemake.output, table, "Hidden settings per backend", hidden_settings.TABLE_CAPTION)
