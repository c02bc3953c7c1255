"""Run metrics -> pairwise significance of the differences between backends
(rule significance)."""

import sys

from dlbench.analysis import collect, stats, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
alpha = snakemake.params.significance_level
pairs = stats.pairwise(collect.read_table(snakemake.input[0]), collect.HEADLINE, alpha)
tables.write(
    snakemake.output,
    pairs,
    "Pairwise differences between backends",
    stats.CAPTION.format(alpha=alpha),
    shown=stats.shown(pairs),
)
print(pairs["test"].value_counts().to_string())
