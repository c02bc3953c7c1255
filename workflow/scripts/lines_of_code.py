"""The library's source -> lines of code per implementation (rule lines_of_code)."""

import sys

from dlbench.analysis import tables
from dlbench.models import lines
from dlbench.registry import Registry

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = lines.table(snakemake.params.implementations, Registry.of_config(snakemake.config))
caption = " ".join(part for part in (lines.CAPTION, lines.order_sentence(table)) if part)
title = "Lines of code per implementation"
tables.write(snakemake.output, table, title, caption, shown=lines.shown(table))
print(table.to_string())
