"""Check records -> the equivalence table (rule equivalence_table)."""

import sys

from dlbench.analysis import (
    collect,
    equivalence_captions,
    equivalence_dropout,
    equivalence_steps,
    tables,
)
from dlbench.run import equivalence

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
settings = snakemake.params.settings
records = collect.load_records(snakemake.input.checks)  # each checked against the schema
table = equivalence_steps.compare(records, settings["reference"], settings["tolerance"])
caption = equivalence_captions.CAPTION.format(
    steps=settings["steps"],
    samples=equivalence.CHECK_SAMPLES,
    tolerance=settings["tolerance"],
    epsilon=equivalence.CHECK_EPSILON,
    jitter=equivalence.INPUT_JITTER,
    draws=equivalence.DROPOUT_DRAWS,
    first_draws=equivalence.FIRST_DRAWS,
    dropout_samples=equivalence.DROPOUT_SAMPLES,
    alpha=equivalence_dropout.DROPOUT_ALPHA,
)
tables.write(snakemake.output, table, "Do the backends take the same steps?", caption)
print(table.to_string())
