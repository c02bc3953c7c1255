"""Run metrics -> the hardware and environment table (rule environment_table)."""

import sys

from dlbench.analysis import collect, hardware, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = hardware.environment_table(collect.read_table(snakemake.input[0]))
tables.write(snakemake.output, table, "Hardware and environment", hardware.ENVIRONMENT_CAPTION)
