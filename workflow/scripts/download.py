"""Fetch one raw dataset file, checksum-verified (rule download)."""

import sys

from dlbench.data.datasets import fetch
from dlbench.run import integrity

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
fetch(
    snakemake.params.source,
    snakemake.params.known_hash,
    snakemake.output[0],
    hash_record=snakemake.params.hash_record,
)
integrity.seal(snakemake.output[0])  # checked before every later use
