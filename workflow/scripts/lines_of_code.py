"""The library's source -> lines of code per implementation (rule lines_of_code)."""

import sys

from dlbench import catalog
from dlbench.analysis import tables
from dlbench.models import lines

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
catalog.add_from_config(snakemake.config)
table = lines.table(snakemake.params.implementations)
title = "Lines of code per implementation"
tables.write(snakemake.output, table, title, lines.CAPTION, shown=lines.wide(table))
print(table.to_string())
