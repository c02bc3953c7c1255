"""Collected tables, equivalence checks and environments (this machine's
markers, other machines' records) -> each backend's versions against each
other (rule versions_table)."""

import json
import sys

from dlbench.analysis import collect, tables, versions

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
with open(snakemake.input.imported) as handle:
    imported = json.load(handle)
found = versions.compare(
    collect.read_table(snakemake.input.metrics),
    collect.read_table(snakemake.input.epochs),
    collect.read_table(snakemake.input.latencies),
    checks=collect.load_records(snakemake.input.checks),
    installed=versions.installed_by_environment(
        snakemake.params.machine, snakemake.params.environments, imported
    ),
    tolerance=snakemake.params.tolerance,
)
shown = versions.table(found)
tables.write(snakemake.output, found, "Is the new release faster?", versions.CAPTION, shown=shown)
print(shown.to_string())
