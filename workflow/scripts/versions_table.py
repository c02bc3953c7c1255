"""Collected tables, equivalence checks and environments -> each backend's
versions against each other (rule versions_table)."""

import sys

from dlbench.analysis import collect, tables, versions

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
found = versions.compare(
    collect.read_table(snakemake.input.metrics),
    collect.read_table(snakemake.input.epochs),
    collect.read_table(snakemake.input.latencies),
    checks=collect.load_records(snakemake.input.checks),
    environments=snakemake.params.environments,
    tolerance=snakemake.params.tolerance,
)
shown = versions.table(found)
tables.write(snakemake.output, found, "Is the new release faster?", versions.CAPTION, shown=shown)
print(shown.to_string())
