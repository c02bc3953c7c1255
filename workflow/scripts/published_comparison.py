"""Published figures beside ours (rule published_comparison)."""

import sys

import pandas as pd

from dlbench.analysis import collect, published, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
table = published.side_by_side(
    published.read(snakemake.input.published),
    collect.read_table(snakemake.input.summary),
    collect.read_table(snakemake.input.metrics),
    hardware=pd.read_csv(snakemake.input.hardware),
    peaks=pd.read_csv(snakemake.input.peaks),
    utilisation=collect.read_table(snakemake.input.utilisation),
)
tables.write(snakemake.output, table, "Published figures and ours", published.CAPTION)
print(
    "{} published figures, {} with a measurement of ours, {} scaled to our peak".format(
        len(table), table["our_value"].notna().sum(), table["published_scaled"].notna().sum()
    )
)
