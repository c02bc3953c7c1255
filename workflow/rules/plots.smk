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


rule plot_accuracy:
    input:
        "results/epochs.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_accuracy.png",
            caption="../report/accuracy.rst",
            category="{dataset} / {model}",
            labels={"figure": "accuracy against epoch"},
        ),
    log:
        "logs/plots/{dataset}_{model}_accuracy.log",
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
