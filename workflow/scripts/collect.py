"""Run records -> metrics.csv, epochs.csv, evaluations.csv, summary.csv (rule collect)."""

import json
import sys

from dlbench.analysis import collect, time_to_accuracy

sys.stderr = sys.stdout = open(snakemake.log[0], "w")
records = collect.load_records(snakemake.input.local)
with open(snakemake.input.imported) as handle:
    records += json.load(handle)  # checked by rule import_results
metrics = collect.metrics(records)
metrics.to_csv(snakemake.output.metrics, index=False)
collect.epochs(records).to_csv(snakemake.output.epochs, index=False)
time_to_accuracy.evaluations(records).to_csv(snakemake.output.evaluations, index=False)
collect.latencies(records).to_csv(snakemake.output.latencies, index=False)
summary = collect.summary(
    metrics,
    not_applicable=snakemake.params.not_applicable,
    tolerances=snakemake.params.tolerances,
    noise_threshold=snakemake.params.noise_threshold,
    alpha=snakemake.params.significance_level,
)
summary.to_csv(snakemake.output.summary, index=False)
print(metrics["status"].value_counts().to_string())
