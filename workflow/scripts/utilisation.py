"""Summary + FLOPs (analytic, or counted for models of the user's own) ->
achieved FLOP/s and MFU (rule utilisation)."""

import json
import sys
from pathlib import Path

import pandas as pd

from dlbench.analysis import collect, tables, utilisation
from dlbench.models import flops
from dlbench.plan import config_registry
from dlbench.run import run_data

sys.stderr = sys.stdout = open(snakemake.log[0], "w")


def flops_of(dataset, model, data_path):
    """Analytic FLOPs, or those counted for a model of the user's (None
    where they could not be counted: its cells get no MFU)."""
    if not registry.is_custom(model):
        reason = run_data.unavailable_reason(data_path)
        if reason:
            print(f"{dataset}/{model}: no FLOPs, its data is unavailable: {reason}")
            return None
        return flops.per_sample_of(data_path, model)
    counted = snakemake.params.counted.get(f"{dataset}/{model}")
    if not counted:
        print(f"{dataset}/{model}: FLOPs not counted (no keras-torch interpreter)")
        return None
    with open(counted) as handle:
        found = json.load(handle)
    if found.get("forward") is None:
        print(f"{dataset}/{model}: FLOPs could not be counted: {found.get('error')}")
        return None
    return found


registry = config_registry.registry_of(snakemake.config)
found = {
    (dataset, model): flops_of(dataset, model, path)
    for (dataset, model), path in zip(snakemake.params.workloads, snakemake.input.data)
}
per_sample = {workload: counts for workload, counts in found.items() if counts}
table = utilisation.table(
    collect.read_table(snakemake.input.summary),
    collect.read_table(snakemake.input.metrics),
    per_sample,
    pd.read_csv(snakemake.input.peaks),
    [json.loads(Path(path).read_text()) for path in snakemake.input.probes],
)
tables.write(
    snakemake.output,
    table,
    "FLOPs and utilisation",
    utilisation.CAPTION,
    shown=utilisation.shown(table),
)
