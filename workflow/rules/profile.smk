rule op_tables:
    input:
        ops=plan.op_profile_files("ops.json"),
        records=plan.op_profile_files("run.json"),
        summary="results/summary.csv",
    output:
        markdown="results/tables/ops.md",
        csv=report(
            "results/tables/ops.csv",
            caption="../report/ops.rst",
            category="Profiles",
            labels={"figure": "time by op category (CSV)"},
        ),
        html=report(
            "results/tables/ops.html",
            caption="../report/ops.rst",
            category="Profiles",
            labels={"figure": "time by op category"},
        ),
        ops_csv="results/tables/ops_per_step.csv",
        gaps_markdown="results/tables/op_gaps.md",
        gaps_csv="results/tables/op_gaps.csv",
        gaps_html=report(
            "results/tables/op_gaps.html",
            caption="../report/op_gaps.rst",
            category="Profiles",
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


rule profile:
    input:
        unpack(plan.bench_inputs),
    output:
        record=f"{PROFILE_DIR}/run.json",
        epochs=f"{PROFILE_DIR}/epochs.csv",
        stacks=f"{PROFILE_DIR}/stacks.txt",
        profile=f"{PROFILE_DIR}/profile.json",
    log:
        f"{PROFILE_DIR}/profile.log",
    conda:
        plan.run_env_file
    threads: plan.bench_threads
    resources:
        cpu_exclusive=plan.cpu_exclusive,
        gpu=plan.gpus_of_run,
        runtime=plan.run_runtime,
        theano_compile_cache=plan.compile_cache_share("theano"),
        pytensor_compile_cache=plan.compile_cache_share("pytensor"),
    params:
        spec=plan.run_spec,
        supervisor=plan.supervisor_python,
        python=plan.backend_python,
        src=plan.src,
        options=plan.profile_options,
    shell:
        "PYTHONPATH={params.src:q} {params.supervisor} -m dlbench.run.supervise"
        " --python {params.python:q} --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.epochs:q} {params.options}"
        "> {log:q} 2>&1"


rule profile_tables:
    input:
        profiles=plan.profile_files("profile.json"),
        stacks=plan.profile_files("stacks.txt"),
        records=plan.profile_files("run.json"),
        summary="results/summary.csv",
    output:
        markdown="results/tables/profile.md",
        csv=report(
            "results/tables/profile.csv",
            caption="../report/profile.rst",
            category="Profiles",
            labels={"figure": "time by layer (CSV)"},
        ),
        html=report(
            "results/tables/profile.html",
            caption="../report/profile.rst",
            category="Profiles",
            labels={"figure": "time by layer"},
        ),
        gaps_markdown="results/tables/profile_gaps.md",
        gaps_csv="results/tables/profile_gaps.csv",
        gaps_html=report(
            "results/tables/profile_gaps.html",
            caption="../report/profile_gaps.rst",
            category="Profiles",
            labels={"figure": "why slower than the fastest"},
        ),
    log:
        "logs/tables/profile.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/profiles.py"


rule plot_profile:
    input:
        "results/tables/profile.csv",
    output:
        report(
            "results/plots/{dataset}_{model}_profile.png",
            caption="../report/profile_plot.rst",
            category="{dataset} / {model}",
            labels={"figure": "time by layer"},
        ),
    log:
        "logs/plots/{dataset}_{model}_profile.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/profiles.py"


rule flame_graph:
    input:
        stacks=f"{PROFILE_DIR}/stacks.txt",
    output:
        report(
            f"{PROFILE_DIR}/flame.png",
            caption="../report/flame_graph.rst",
            category="{dataset} / {model}",
            subcategory="flame graphs",
            labels={
                "figure": "{backend} devices={devices} threads={threads} {precision} {compile}",
            },
        ),
    log:
        f"{PROFILE_DIR}/flame.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/profiles.py"


# This file's targets (all): the op profiles' tables and each workload's plot;
# with python_stacks, the sampled layers' tables and plots and each sampled
# cell's flame graph.
if plan.op_profiled_runs():
    TARGETS += [
        rules.op_tables.output.markdown,
        rules.op_tables.output.gaps_markdown,
        *[
            path
            for dataset, model in plan.op_profiled_workloads()
            for path in expand(rules.plot_ops.output, dataset=dataset, model=model)
        ],
    ]
if plan.profile_runs():
    TARGETS += [
        rules.profile_tables.output.markdown,
        rules.profile_tables.output.gaps_markdown,
        *plan.flame_graphs(),
        *[
            path
            for dataset, model in plan.profiled_workloads()
            for path in expand(rules.plot_profile.output, dataset=dataset, model=model)
        ],
    ]
