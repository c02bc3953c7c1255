"""Collected tables -> every backend's releases in a series, the steps
marked (rule version_history)."""

import sys

from dlbench.analysis import collect, tables, version_history

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
factor, alpha = snakemake.params.factor, snakemake.params.alpha
found = version_history.series(
    collect.read_table(snakemake.input.metrics),
    collect.read_table(snakemake.input.epochs),
    collect.read_table(snakemake.input.latencies),
    factor=factor,
    alpha=alpha,
)
shown = version_history.table(found)
caption = version_history.caption(factor, alpha)
tables.write(snakemake.output, found, "Releases in a series", caption, shown=shown)
print(shown.to_string())
