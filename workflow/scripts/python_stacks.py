"""The python stacks (rule python_stacks) -> time by layer and why slower
(rule python_stacks_tables), a workload's plot (rule plot_python_stacks) and
a cell's flame graph (rule flame_graph)."""

import json
import sys

from dlbench.analysis import collect, python_stacks, tables
from dlbench.plan import matrix
from dlbench.record import contract
from dlbench.record.fields import Status

sys.stderr = sys.stdout = open(snakemake.log[0], "w")


def summary_rows(path):
    """{cell key: the summary's row}."""
    summary = collect.read_table(path)
    return {python_stacks.key_of(row): row.to_dict() for _, row in summary.iterrows()}


if snakemake.rule == "flame_graph":
    wildcards = snakemake.wildcards
    title = "{} / {} on {} ({}): the clocked steady state".format(
        wildcards.dataset,
        wildcards.model,
        wildcards.backend,
        ", ".join(f"{d}={getattr(wildcards, d)}" for d in matrix.DIMENSION_NAMES),
    )
    python_stacks.flame_graph(
        python_stacks.read_stacks(snakemake.input.stacks), title, snakemake.output[0]
    )
elif snakemake.rule == "plot_python_stacks":
    found = collect.read_table(snakemake.input[0])
    python_stacks.plot(
        found, snakemake.wildcards.dataset, snakemake.wildcards.model, snakemake.output[0]
    )
else:
    summary = summary_rows(snakemake.input.summary)
    rows, hot_spots = [], {}
    inputs = zip(snakemake.input.sampling, snakemake.input.stacks, snakemake.input.records)
    for sampling_path, stacks_path, record_path in inputs:
        with open(sampling_path) as handle:
            description = json.load(handle)
        with open(record_path) as handle:
            record = contract.read(json.load(handle))  # an older version's as this one
        found = python_stacks.layers_of(python_stacks.read_stacks(stacks_path))
        key = python_stacks.key_of(record)
        row = python_stacks.cell_row(found, description, record, summary.get(key, {}))
        if record.get("status") != Status.OK and not row["reason"]:
            row["reason"] = "the sampled run {}: {}".format(
                record.get("status"), record.get("reason")
            )
        rows.append(row)
        hot_spots[key] = found["hot"]
        print(f"{record_path}: {found['samples']} samples in the clock, {description}")
    found = python_stacks.table(rows)
    title = "Where the time goes, layer by layer"
    tables.write(
        snakemake.output, found, title, python_stacks.CAPTION, shown=python_stacks.shown(found)
    )
    gaps = python_stacks.gaps(found, hot_spots)
    output = tables.second_table(snakemake.output, "gaps_")
    tables.write(output, gaps, "Why slower than the fastest", python_stacks.GAPS_CAPTION)
    print(found.to_string())
    print(gaps.to_string())
