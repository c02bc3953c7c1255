"""The library's source -> lines of code per implementation (rule lines_of_code)."""

import sys

from dlbench.analysis import tables
from dlbench.models import lines
from dlbench.plan import config_registry

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = lines.table(snakemake.params.implementations, config_registry.registry_of(snakemake.config))
caption = " ".join(part for part in (lines.CAPTION, lines.order_sentence(table)) if part)
title = "Lines of code per implementation"
tables.write(snakemake.output, table, title, caption, shown=lines.shown(table))
print(table.to_string())
