"""Summary and significance -> the relative-speed heat-map and the report's
front page around it (rule front_page)."""

import sys

from dlbench.analysis import collect, front_page, plots_heat_maps

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
summary = collect.read_table(snakemake.input.summary)
plots_heat_maps.relative_speed(summary, snakemake.output.heat_map)
front_page.write(
    summary,
    collect.read_table(snakemake.input.pairs),
    snakemake.params.significance_level,
    snakemake.output.heat_map,
    snakemake.output.front_page,
    collect.read_table(snakemake.input.op_gaps) if "op_gaps" in snakemake.input.keys() else None,
    (
        collect.read_table(snakemake.input.time_to_accuracy),
        collect.read_table(snakemake.input.time_to_accuracy_pairs),
    )
    if "time_to_accuracy" in snakemake.input.keys()
    else None,
)
print("front page: {}".format(snakemake.output.front_page))
