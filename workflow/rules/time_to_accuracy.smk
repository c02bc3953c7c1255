# Time to accuracy (a workload's time_to_accuracy): which backend trains the
# workload to a target on held-out data first, over seeds, from the runs'
# evaluations (results/evaluations.csv; dlbench.analysis.time_to_accuracy).


rule time_to_accuracy:
    input:
        evaluations="results/evaluations.csv",
        metrics="results/metrics.csv",
    output:
        markdown="results/tables/time_to_accuracy.md",
        csv=report(
            "results/tables/time_to_accuracy.csv",
            caption="../report/time_to_accuracy.rst",
            category="Time to accuracy",
            labels={"figure": "time to accuracy (CSV)"},
        ),
        html=report(
            "results/tables/time_to_accuracy.html",
            caption="../report/time_to_accuracy.rst",
            category="Time to accuracy",
            labels={"figure": "time to accuracy"},
        ),
        pairs_markdown="results/tables/time_to_accuracy_pairs.md",
        pairs_csv=report(
            "results/tables/time_to_accuracy_pairs.csv",
            caption="../report/time_to_accuracy_pairs.rst",
            category="Time to accuracy",
            labels={"figure": "which backend first (CSV)"},
        ),
        pairs_html=report(
            "results/tables/time_to_accuracy_pairs.html",
            caption="../report/time_to_accuracy_pairs.rst",
            category="Time to accuracy",
            labels={"figure": "which backend first"},
        ),
        runs=report(
            "results/tables/time_to_accuracy_runs.csv",
            caption="../report/time_to_accuracy_runs.rst",
            category="Time to accuracy",
            labels={"figure": "every seed (CSV)"},
        ),
    log:
        "logs/tables/time_to_accuracy.log",
    conda:
        MAIN_ENV
    params:
        settings=targets.time_to_accuracy_settings(),
        significance_level=config["significance_level"],
    script:
        "../scripts/time_to_accuracy.py"


rule plot_time_to_accuracy:
    input:
        evaluations="results/evaluations.csv",
        runs="results/tables/time_to_accuracy_runs.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_time_to_accuracy.png",
            caption="../report/time_to_accuracy_plot.rst",
            category="Time to accuracy",
            labels={"figure": "{dataset} / {model}"},
        ),
    log:
        "logs/plots/{dataset}_{model}_time_to_accuracy.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/time_to_accuracy.py"


# This file's targets (rule all): with a workload that measures its time to
# accuracy, the tables and each such workload's plot.
if targets.time_to_accuracy_workloads():
    TARGETS += [
        rules.time_to_accuracy.output.markdown,
        rules.time_to_accuracy.output.pairs_markdown,
        *[
            path
            for dataset, model in targets.time_to_accuracy_workloads()
            for path in expand(
                rules.plot_time_to_accuracy.output, dataset=dataset, model=model
            )
        ],
    ]
