"""Run metrics -> the hardware and environment table (rule environment_table)."""

import sys

import pandas as pd

from dlbench import hardware, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = hardware.environment_table(pd.read_csv(snakemake.input[0]))
tables.write(snakemake.output, table, "Hardware and environment", hardware.ENVIRONMENT_CAPTION)
