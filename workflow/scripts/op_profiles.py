"""The runs' op profiles (ops.json) -> time by op category and why slower,
op by op (rule op_tables), and a workload's plot (rule plot_ops)."""

import json
import sys

import pandas as pd

from dlbench.analysis import collect, op_profiles, tables

sys.stderr = sys.stdout = open(snakemake.log[0], "w")


def read_json(path):
    with open(path) as handle:
        return json.load(handle)


if snakemake.rule == "plot_ops":
    found = collect.read_table(snakemake.input[0])
    op_profiles.plot(
        found, snakemake.wildcards.dataset, snakemake.wildcards.model, snakemake.output[0]
    )
else:
    summary = collect.read_table(snakemake.input.summary)
    summary_rows = {op_profiles.key_of(row): row.to_dict() for _, row in summary.iterrows()}
    runs = []
    for ops_path, record_path in zip(snakemake.input.ops, snakemake.input.records):
        record = read_json(record_path)
        runs.append((record, read_json(ops_path), summary_rows.get(op_profiles.key_of(record))))
    found, ops = op_profiles.table(runs)
    title = "Where the step goes, op by op"
    tables.write(
        snakemake.output, found, title, op_profiles.CAPTION, shown=op_profiles.shown(found)
    )
    per_step = [
        dict(
            zip(op_profiles.matrix.CELL, key),
            op=name,
            category=category,
            calls_per_step=calls,
            ms_per_step=ms,
        )
        for key, listed in ops.items()
        for name, category, calls, ms in listed
    ]
    pd.DataFrame(per_step).to_csv(snakemake.output.ops_csv, index=False)
    gaps = op_profiles.gaps(found, ops)
    output = tables.second_table(snakemake.output, "gaps_")
    tables.write(
        output,
        gaps,
        "Why slower, op by op",
        op_profiles.GAPS_CAPTION,
        shown=op_profiles.shown_gaps(gaps),
    )
    print(found.to_string())
    print(gaps.to_string())
