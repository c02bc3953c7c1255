# The python stacks (config python_stacks): one extra run of a cell under
# py-spy, which samples its Python stacks (dlbench.run.stack_sampling), read
# into the layers' tables, each workload's plot and each cell's flame graph
# (dlbench.analysis.python_stacks; docs/profiles.md).


rule python_stacks:
    input:
        unpack(targets.bench_inputs),
    output:
        record=f"{PYTHON_STACKS_DIR}/run.json",
        epochs=f"{PYTHON_STACKS_DIR}/epochs.csv",
        stacks=f"{PYTHON_STACKS_DIR}/stacks.txt",
        sampling=f"{PYTHON_STACKS_DIR}/sampling.json",
    log:
        f"{PYTHON_STACKS_DIR}/python_stacks.log",
    conda:
        targets.run_env_file
    threads: targets.bench_threads
    resources:
        cpu_exclusive=targets.cpu_exclusive,
        gpu=targets.gpus_of_run,
        runtime=targets.run_runtime,
        theano_compile_cache=targets.compile_cache_share("theano"),
        pytensor_compile_cache=targets.compile_cache_share("pytensor"),
    params:
        spec=targets.run_spec,
        supervisor=targets.supervisor_python,
        python=targets.backend_python,
        src=targets.src,
        options=targets.python_stacks_options,
    shell:
        "PYTHONPATH={params.src:q} {params.supervisor} -m dlbench.run.supervise"
        " --python {params.python:q} --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.epochs:q} {params.options}"
        "> {log:q} 2>&1"


rule python_stacks_tables:
    input:
        sampling=targets.python_stacks_files("sampling.json"),
        stacks=targets.python_stacks_files("stacks.txt"),
        records=targets.python_stacks_files("run.json"),
        summary="results/summary.csv",
    output:
        markdown="results/tables/python_stacks.md",
        csv=report(
            "results/tables/python_stacks.csv",
            caption="../report/python_stacks.rst",
            category="Python stacks",
            labels={"figure": "time by layer (CSV)"},
        ),
        html=report(
            "results/tables/python_stacks.html",
            caption="../report/python_stacks.rst",
            category="Python stacks",
            labels={"figure": "time by layer"},
        ),
        gaps_markdown="results/tables/python_stacks_gaps.md",
        gaps_csv="results/tables/python_stacks_gaps.csv",
        gaps_html=report(
            "results/tables/python_stacks_gaps.html",
            caption="../report/python_stacks_gaps.rst",
            category="Python stacks",
            labels={"figure": "why slower than the fastest"},
        ),
    log:
        "logs/tables/python_stacks.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/python_stacks.py"


rule plot_python_stacks:
    input:
        "results/tables/python_stacks.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_python_stacks.png",
            caption="../report/python_stacks_plot.rst",
            category="{dataset} / {model}",
            labels={"figure": "time by layer"},
        ),
    log:
        "logs/plots/{dataset}_{model}_python_stacks.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/python_stacks.py"


rule flame_graph:
    input:
        stacks=f"{PYTHON_STACKS_DIR}/stacks.txt",
    output:
        report(
            f"{PYTHON_STACKS_DIR}/flame.png",
            caption="../report/flame_graph.rst",
            category="{dataset} / {model}",
            subcategory="flame graphs",
            labels={
                "figure": "{backend} devices={devices} threads={threads} {precision} {compile}",
            },
        ),
    log:
        f"{PYTHON_STACKS_DIR}/flame.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/python_stacks.py"


# This file's targets (all): with python_stacks, the sampled layers' tables and
# plots and each sampled cell's flame graph.
if targets.python_stacks_runs():
    TARGETS += [
        rules.python_stacks_tables.output.markdown,
        rules.python_stacks_tables.output.gaps_markdown,
        *targets.flame_graphs(),
        *[
            path
            for dataset, model in targets.python_stacks_workloads()
            for path in expand(
                rules.plot_python_stacks.output, dataset=dataset, model=model
            )
        ],
    ]
