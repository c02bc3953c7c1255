"""Overview figures (rules plot_published, plot_utilisation; the heat-map:
front_page.py)."""

import sys

from dlbench.analysis import collect, plots_heat_maps, published

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
PLOTTERS = {
    "plot_published": published.plot,
    "plot_utilisation": plots_heat_maps.utilisation,
}
PLOTTERS[snakemake.rule](collect.read_table(snakemake.input[0]), snakemake.output[0])
