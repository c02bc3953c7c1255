"""Evaluations and metrics -> the time-to-accuracy tables (rule
time_to_accuracy) and a workload's plot (rule plot_time_to_accuracy)."""

import sys

from dlbench.analysis import collect, plots_time_to_accuracy, tables
from dlbench.analysis import time_to_accuracy as tta
from dlbench.analysis import time_to_accuracy_tables as tta_tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
evaluations = collect.read_table(snakemake.input.evaluations)
if snakemake.rule == "plot_time_to_accuracy":
    plots_time_to_accuracy.time_to_accuracy(
        evaluations,
        collect.read_table(snakemake.input.runs),
        snakemake.wildcards.dataset,
        snakemake.wildcards.model,
        snakemake.output[0],
    )
else:
    alpha = snakemake.params.significance_level
    runs = tta.per_run(
        evaluations, collect.read_table(snakemake.input.metrics), snakemake.params.settings
    )
    runs.to_csv(snakemake.output.runs, index=False)
    pairs = tta.pairs(runs, alpha)
    cells = tta.per_cell(runs, pairs)
    tables.write(
        snakemake.output,
        cells,
        "Time to accuracy",
        tta_tables.CAPTION.format(alpha=alpha),
        shown=tta_tables.shown_cells(cells),
    )
    output = tables.second_table(snakemake.output, "pairs_")
    tables.write(
        output,
        pairs,
        "Which backend reaches the target first",
        tta_tables.PAIRS_CAPTION.format(alpha=alpha),
        shown=tta_tables.shown_pairs(pairs),
    )
    print(cells.to_string())
    print(pairs.to_string())
