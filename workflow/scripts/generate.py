"""Write a generated stand-in dataset in its original file format (rule generate)."""

import sys

from dlbench.data import stand_ins
from dlbench.run import integrity

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
stand_ins.write(snakemake.params.like, snakemake.output[0], **snakemake.params.sizes)
integrity.seal(snakemake.output[0])  # checked before every later use
