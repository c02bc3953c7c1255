"""Write one normalised array file per dataset (rule prepare)."""

import sys

from dlbench.data import prepare

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
shapes = prepare(snakemake.wildcards.dataset, dict(snakemake.input), snakemake.output[0])
print(shapes)
