"""Collected tables, equivalence checks, op profiles and environments (this
machine's markers, other machines' records) -> each backend's versions
against each other, with asv's verdict (rule versions_table)."""

import json
import sys

from dlbench.analysis import collect, tables, versions

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
with open(snakemake.input.imported) as handle:
    imported = json.load(handle)
ops = [path for path in snakemake.input.ops]
factor, alpha = snakemake.params.factor, snakemake.params.alpha
found = versions.compare(
    collect.read_table(snakemake.input.metrics),
    collect.read_table(snakemake.input.epochs),
    collect.read_table(snakemake.input.latencies),
    checks=collect.load_records(snakemake.input.checks),
    installed=versions.installed_by_environment(
        snakemake.params.machine, snakemake.params.environments, imported
    ),
    tolerance=snakemake.params.tolerance,
    factor=factor,
    alpha=alpha,
    ops=collect.read_table(ops[0]) if ops else None,
)
shown = versions.table(found)
caption = versions.caption(factor, alpha)
tables.write(snakemake.output, found, "Is the new release faster?", caption, shown=shown)
print(shown.to_string())
