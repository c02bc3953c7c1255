"""Summary and metrics -> every backend on every machine (rule
machine_comparison), and whether the ranking of backends changes between
machines (rule machine_interaction)."""

import sys

from dlbench.analysis import collect, machines, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
if snakemake.rule == "machine_comparison":
    comparison = machines.comparison(
        collect.read_table(snakemake.input[0]),
        snakemake.params.machines,
        snakemake.params.reference_machine,
    )
    reference = comparison["reference"].iloc[0] if len(comparison) else "-"
    tables.write(
        snakemake.output,
        comparison,
        "Backends across machines",
        machines.CAPTION.format(reference=reference),
        shown=machines.shown(comparison),
    )
    machines.plot(comparison, snakemake.output.plot)
else:
    alpha = snakemake.params.significance_level
    tested = machines.interaction(collect.read_table(snakemake.input[0]), alpha)
    tables.write(
        snakemake.output,
        tested,
        "Does the ranking of backends change between machines?",
        machines.INTERACTION_CAPTION.format(alpha=alpha),
    )
    print(tested.to_string())
