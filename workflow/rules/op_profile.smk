# The op profiles (config op_profile): the window each timed run takes under
# its framework's own profiler (ops.json beside its record, rule bench),
# read into the op tables and each workload's plot (docs/profiles.md).


rule op_tables:
    input:
        ops=targets.op_profile_files("ops.json"),
        records=targets.op_profile_files("run.json"),
        summary="results/summary.csv",
    output:
        markdown="results/tables/ops.md",
        csv=report(
            "results/tables/ops.csv",
            caption="../report/ops.rst",
            category="Op profiles",
            labels={"figure": "time by op category (CSV)"},
        ),
        html=report(
            "results/tables/ops.html",
            caption="../report/ops.rst",
            category="Op profiles",
            labels={"figure": "time by op category"},
        ),
        ops_csv="results/tables/ops_per_step.csv",
        gaps_markdown="results/tables/op_gaps.md",
        gaps_csv="results/tables/op_gaps.csv",
        gaps_html=report(
            "results/tables/op_gaps.html",
            caption="../report/op_gaps.rst",
            category="Op profiles",
            labels={"figure": "why slower, op by op"},
        ),
    log:
        "logs/tables/ops.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/op_profiles.py"


rule plot_ops:
    input:
        "results/tables/ops.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_ops.png",
            caption="../report/ops_plot.rst",
            category="{dataset} / {model}",
            labels={"figure": "time by op category"},
        ),
    log:
        "logs/plots/{dataset}_{model}_ops.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/op_profiles.py"


# This file's targets (all): the op profiles' tables and each workload's plot.
if targets.op_profiled_runs():
    TARGETS += [
        rules.op_tables.output.markdown,
        rules.op_tables.output.gaps_markdown,
        *[
            path
            for dataset, model in targets.op_profiled_workloads()
            for path in expand(rules.plot_ops.output, dataset=dataset, model=model)
        ],
    ]
