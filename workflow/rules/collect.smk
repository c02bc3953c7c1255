rule collect:
    input:
        local=targets.run_records(),
        imported="results/imported/records.json",
    output:
        metrics=report(
            "results/metrics.csv",
            caption="../report/metrics.rst",
            category="Overview",
        ),
        epochs="results/epochs.csv",
        evaluations="results/evaluations.csv",
        latencies="results/latencies.csv",
        summary=report(
            "results/summary.csv",
            caption="../report/summary.rst",
            category="Overview",
        ),
    log:
        "logs/collect.log",
    conda:
        MAIN_ENV
    params:
        not_applicable=matrix.not_applicable_cells(config),
        tolerances=targets.accuracy_tolerances(),
        noise_threshold=config["noise_threshold"],
        significance_level=config["significance_level"],
    script:
        "../scripts/collect.py"


rule workload_table:
    input:
        unpack(targets.workload_table_inputs),
    output:
        markdown="results/tables/{dataset}_{model}.md",
        csv=report(
            "results/tables/{dataset}_{model}.csv",
            caption="../report/workload_table.rst",
            category="{dataset} / {model}",
            labels={"figure": "table (CSV)"},
        ),
        html=report(
            "results/tables/{dataset}_{model}.html",
            caption="../report/workload_table.rst",
            category="{dataset} / {model}",
            labels={"figure": "table"},
        ),
    log:
        "logs/tables/{dataset}_{model}.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/workload_table.py"


# This file's targets (rule all): every run record, since Snakemake re-makes a
# missing target, not a missing intermediate file (a deleted or never finished
# record is run again only as a target), the collected tables and each
# workload's table.
TARGETS += [
    *targets.run_records(),
    rules.collect.output.metrics,
    rules.collect.output.summary,
    *expand(
        rules.workload_table.output.markdown,
        zip,
        dataset=[entry["dataset"] for entry in config["workloads"]],
        model=[entry["model"] for entry in config["workloads"]],
    ),
]
