rule collect:
    input:
        local=plan.run_records(),
        imported="results/imported/records.json",
    output:
        metrics=report(
            "results/metrics.csv",
            caption="../report/metrics.rst",
            category="Overview",
        ),
        epochs="results/epochs.csv",
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
        tolerances=plan.accuracy_tolerances(),
        noise_threshold=config["noise_threshold"],
        significance_level=config["significance_level"],
    script:
        "../scripts/collect.py"


rule workload_table:
    input:
        unpack(plan.workload_table_inputs),
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
