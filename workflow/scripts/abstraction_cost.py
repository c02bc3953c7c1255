"""Collected tables -> Keras / native ratios with intervals (rule abstraction_cost)."""

import sys

import pandas as pd

from dlbench import abstraction

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
cost = abstraction.abstraction_cost(
    pd.read_csv(snakemake.input.metrics),
    pd.read_csv(snakemake.input.epochs),
    pd.read_csv(snakemake.input.latencies),
)
cost.to_csv(snakemake.output.csv, index=False)
shown = abstraction.table(cost)
with open(snakemake.output.markdown, "w") as handle:
    handle.write("### Cost of abstraction (Keras / native)\n\n")
    handle.write(shown.to_markdown(index=False, missingval="–") if len(shown) else "No pair ran.")
    handle.write("\n\n{}\n".format(abstraction.CAPTION))
print(shown.to_string())
