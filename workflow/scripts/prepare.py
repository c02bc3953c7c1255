"""Write one normalised array file per dataset (rule prepare)."""

import sys

from dlbench import catalog
from dlbench.data.datasets import prepare
from dlbench.run import integrity

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
catalog.add_from_config(snakemake.config)  # synthetic datasets of the config
raw_files = {name: path for name, path in snakemake.input.items() if name != "code"}
shapes = prepare(snakemake.wildcards.dataset, raw_files, snakemake.output[0])
print(shapes)
integrity.seal(snakemake.output[0])  # checked before every later use
