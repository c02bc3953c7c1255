"""Inference run records -> the predictions table (rule predictions_table)."""

import sys

from dlbench.analysis import collect, equivalence_captions, equivalence_predictions, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
settings = snakemake.params.settings
records = collect.load_records(snakemake.input.records)  # each checked against the schema
table = equivalence_predictions.compare_predictions(
    records, settings["reference"], settings["prediction_tolerance"]
)
caption = equivalence_captions.PREDICTIONS_CAPTION.format(
    reference=settings["reference"], tolerance=settings["prediction_tolerance"]
)
# precision and compile shown where they vary, as in the other tables
shown = table.drop(columns=[c for c in ("precision", "compile") if table[c].nunique() <= 1])
tables.write(snakemake.output, table, "Predictions from the same weights", caption, shown=shown)
print(table.to_string())
