rule plot_epoch_time:
    input:
        "results/summary.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_epoch_time.png",
            caption="../report/epoch_time.rst",
            category="{dataset} / {model}",
            labels={"figure": "seconds per epoch"},
        ),
    log:
        "logs/plots/{dataset}_{model}_epoch_time.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot.py"


rule plot_convergence:
    input:
        "results/epochs.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_convergence.png",
            caption="../report/convergence.rst",
            category="{dataset} / {model}",
            labels={"figure": "convergence"},
        ),
    log:
        "logs/plots/{dataset}_{model}_convergence.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot.py"


rule plot_latency:
    input:
        "results/latencies.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_latency.png",
            caption="../report/latency.rst",
            category="{dataset} / {model}",
            labels={"figure": "inference latency"},
        ),
    log:
        "logs/plots/{dataset}_{model}_latency.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot.py"


rule plot_throughput:
    input:
        "results/summary.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_throughput.png",
            caption="../report/throughput.rst",
            category="{dataset} / {model}",
            labels={"figure": "seconds per 1,000 samples"},
        ),
    log:
        "logs/plots/{dataset}_{model}_throughput.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot.py"


rule plot_scaling:
    input:
        "results/summary.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_scaling.png",
            caption="../report/scaling.rst",
            category="{dataset} / {model}",
            labels={"figure": "scaling over devices"},
        ),
    log:
        "logs/plots/{dataset}_{model}_scaling.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot.py"


rule plot_threads_scaling:
    input:
        "results/summary.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_threads_scaling.png",
            caption="../report/threads_scaling.rst",
            category="{dataset} / {model}",
            labels={"figure": "time against CPU threads"},
        ),
    log:
        "logs/plots/{dataset}_{model}_threads_scaling.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot.py"


# This file's targets (rule all): each workload's plots (matrix.plots: those
# its dimensions and task call for).
TARGETS += [
    path
    for entry in config["workloads"]
    for plot in matrix.plots(config, entry)
    for path in expand(
        getattr(rules, f"plot_{plot}").output,
        dataset=entry["dataset"],
        model=entry["model"],
    )
]
