"""Collected tables -> each precision and compile mode against float32 eager (rule speedups)."""

import sys

from dlbench.analysis import collect, precision_and_compile, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
found = precision_and_compile.speedups(
    collect.read_table(snakemake.input.metrics),
    collect.read_table(snakemake.input.epochs),
    collect.read_table(snakemake.input.latencies),
    tolerance=snakemake.params.accuracy_tolerance,
)
shown = precision_and_compile.table(found)
title = "Precision and compilation against float32 eager"
tables.write(snakemake.output, found, title, precision_and_compile.CAPTION, shown=shown)
print(shown.to_string())
