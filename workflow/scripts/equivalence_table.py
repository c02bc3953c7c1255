"""Check records -> the equivalence table (rule equivalence_table)."""

import json
import sys

from dlbench import equivalence, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
settings = snakemake.params.settings
records = []
for path in snakemake.input.checks:
    with open(path) as handle:
        records.append(json.load(handle))
table = equivalence.compare(records, settings["reference"], settings["tolerance"])
caption = equivalence.CAPTION.format(
    steps=settings["steps"], samples=equivalence.CHECK_SAMPLES, tolerance=settings["tolerance"]
)
tables.write(snakemake.output, table, "Do the backends take the same steps?", caption)
print(table.to_string())
