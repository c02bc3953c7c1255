rule significance:
    input:
        "results/metrics.csv",
    output:
        csv=report(
            "results/tables/significance.csv",
            caption="../report/significance.rst",
            category="Overview",
            labels={"figure": "pairwise differences (CSV)"},
        ),
        html=report(
            "results/tables/significance.html",
            caption="../report/significance.rst",
            category="Overview",
            labels={"figure": "pairwise differences"},
        ),
        markdown="results/tables/significance.md",
    log:
        "logs/tables/significance.log",
    conda:
        MAIN_ENV
    params:
        significance_level=config["significance_level"],
    script:
        "../scripts/significance.py"


rule manifest_table:
    input:
        "results/metrics.csv",
    output:
        csv=report(
            "results/tables/manifest.csv",
            caption="../report/manifest.rst",
            category="Overview",
            labels={"figure": "hidden settings per backend (CSV)"},
        ),
        html=report(
            "results/tables/manifest.html",
            caption="../report/manifest.rst",
            category="Overview",
            labels={"figure": "hidden settings per backend"},
        ),
        markdown="results/tables/manifest.md",
    log:
        "logs/tables/manifest.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/manifest_table.py"


rule environment_table:
    input:
        "results/metrics.csv",
    output:
        csv=report(
            "results/tables/environment.csv",
            caption="../report/environment.rst",
            category="Overview",
            labels={"figure": "hardware and environment (CSV)"},
        ),
        html=report(
            "results/tables/environment.html",
            caption="../report/environment.rst",
            category="Overview",
            labels={"figure": "hardware and environment"},
        ),
        markdown="results/tables/environment.md",
    log:
        "logs/tables/environment.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/environment_table.py"


# The heat-map and the report's front page around it (workflow/report/workflow.rst
# includes front_page.rst first): the answer before the method. The front page is
# written here, beside the heat-map it embeds, so that every target that makes the
# heat-map makes it too.
rule front_page:
    input:
        unpack(targets.front_page_inputs),
    output:
        heat_map=report(
            "results/plots/relative_speed.png",
            caption="../report/relative_speed.rst",
            category="Overview",
            labels={"figure": "relative speed heat-map"},
        ),
        front_page="results/report/front_page.rst",
    log:
        "logs/plots/relative_speed.log",
    conda:
        MAIN_ENV
    params:
        significance_level=config["significance_level"],
    script:
        "../scripts/front_page.py"


rule count_flops:
    input:
        unpack(targets.flops_count_inputs),
    output:
        "results/flops/{dataset}/{model}.json",
    log:
        "logs/flops/{dataset}/{model}.log",
    conda:
        targets.env_file(KERAS_ON_TORCH)
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        python=targets.keras_on_torch_python(),
        custom=targets.custom_model_option,
        check=targets.model_check_option,
        src=targets.src,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.flops_count"
        " --model {wildcards.model:q} {params.custom} {params.check} --data {input.data:q}"
        " --output {output:q} > {log:q} 2>&1"


rule cpu_probe:
    input:
        unpack(lambda wildcards: targets.probe_inputs(KERAS_ON_TORCH)),
    output:
        paths.CPU_PROBE,
    log:
        "logs/probes/{machine}/threads={threads}/precision={precision}.log",
    conda:
        targets.env_file(KERAS_ON_TORCH)
    threads: targets.bench_threads
    resources:
        cpu_exclusive=WHOLE_CPU,
    params:
        python=targets.keras_on_torch_python(),
        src=targets.src,
        largest=config["probe_largest_size"],
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.probe"
        " --precision {wildcards.precision} --threads {wildcards.threads}"
        " --largest {params.largest}"
        " --machine {wildcards.machine:q} --output {output:q} > {log:q} 2>&1"


rule gpu_probe:
    input:
        unpack(lambda wildcards: targets.probe_inputs(TORCH_ON_GPUS)),
    output:
        paths.GPU_PROBE,
    log:
        "logs/probes/{machine}/gpu/precision={precision}.log",
    conda:
        targets.env_file(TORCH_ON_GPUS)
    resources:
        gpu=1,
    params:
        python=targets.environment_python(TORCH_ON_GPUS),
        src=targets.src,
        locks=targets.gpu_lock_dir,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.probe --device gpu"
        " --precision {wildcards.precision} --threads all --gpu-lock-dir {params.locks}"
        " --machine {wildcards.machine:q} --output {output:q} > {log:q} 2>&1"


rule utilisation:
    input:
        summary="results/summary.csv",
        metrics="results/metrics.csv",
        probes=targets.machine_probes() + targets.gpu_probes(),
        peaks="workflow/resources/gpu_peaks.csv",
        data=targets.workload_data(),
        counted=list(targets.counted_flops().values()),
        code=targets.code("models/flops"),
    output:
        csv=report(
            "results/tables/utilisation.csv",
            caption="../report/utilisation.rst",
            category="FLOPs and utilisation",
            labels={"figure": "table (CSV)"},
        ),
        html=report(
            "results/tables/utilisation.html",
            caption="../report/utilisation.rst",
            category="FLOPs and utilisation",
            labels={"figure": "table"},
        ),
        markdown="results/tables/utilisation.md",
    log:
        "logs/tables/utilisation.log",
    conda:
        MAIN_ENV
    params:
        workloads=[(dataset, model) for dataset, model, _ in targets.workloads],
        counted=targets.counted_flops(),
    script:
        "../scripts/utilisation.py"


rule plot_utilisation:
    input:
        "results/tables/utilisation.csv",
    output:
        report(
            "results/plots/utilisation.png",
            caption="../report/utilisation.rst",
            category="FLOPs and utilisation",
            labels={"figure": "model FLOP utilisation"},
        ),
    log:
        "logs/plots/utilisation.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/plot_overview.py"


rule cold_start:
    input:
        "results/metrics.csv",
    output:
        csv=report(
            "results/tables/cold_start.csv",
            caption="../report/cold_start.rst",
            category="Time to first step",
            labels={"figure": "table (CSV)"},
        ),
        html=report(
            "results/tables/cold_start.html",
            caption="../report/cold_start.rst",
            category="Time to first step",
            labels={"figure": "table"},
        ),
        markdown="results/tables/cold_start.md",
    log:
        "logs/tables/cold_start.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/cold_start.py"


rule plot_cold_start:
    input:
        "results/tables/cold_start.csv",
    output:
        report(
            "results/plots/cold_start.png",
            caption="../report/cold_start.rst",
            category="Time to first step",
            labels={"figure": "time to first step"},
        ),
    log:
        "logs/plots/cold_start.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/cold_start.py"


# This file's targets (rule all): the overview's tables and plots.
TARGETS += [
    rules.significance.output.markdown,
    rules.manifest_table.output.markdown,
    rules.environment_table.output.markdown,
    *rules.front_page.output,
    rules.utilisation.output.markdown,
    *rules.plot_utilisation.output,
    rules.cold_start.output.markdown,
    *rules.plot_cold_start.output,
]
