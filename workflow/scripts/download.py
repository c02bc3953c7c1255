"""Fetch one raw dataset file, checksum-verified (rule download); where it
cannot be had, the reason in its place: the dataset's cells are then
unavailable, and every other table and the report are still made."""

import sys

from dlbench.data.unfetched import fetch_or_say_why
from dlbench.run import integrity

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
fetch_or_say_why(
    snakemake.params.source,
    snakemake.params.known_hash,
    snakemake.output[0],
    hash_record=snakemake.params.hash_record,
)
integrity.seal(snakemake.output[0])  # checked before every later use
