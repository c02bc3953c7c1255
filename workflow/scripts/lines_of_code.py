"""The library's source -> lines of code per implementation (rule lines_of_code)."""

import sys

from dlbench.analysis import tables
from dlbench.models import lines
from dlbench.registry import Registry

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = lines.table(snakemake.params.implementations, Registry.of_config(snakemake.config))
title = "Lines of code per implementation"
tables.write(snakemake.output, table, title, lines.CAPTION, shown=lines.wide(table))
print(table.to_string())
