rule equivalence_check:
    input:
        unpack(bench_inputs),
    output:
        record=f"{CHECK_DIR}/check.json",
        steps=f"{CHECK_DIR}/steps.csv",
    log:
        f"{CHECK_DIR}/check.log",
    conda:
        run_env_file
    threads: bench_threads
    resources:
        cpu_exclusive=1,
        runtime=run_runtime,
    params:
        spec=check_spec,
        supervisor=supervisor_python,
        python=backend_python,
        src=os.path.relpath(SRC),
        options=supervisor_options,
    shell:
        "PYTHONPATH={params.src:q} {params.supervisor} -m dlbench.supervise"
        " --python {params.python:q} --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.steps:q} {params.options}"
        "> {log:q} 2>&1"


rule equivalence_table:
    input:
        checks=check_records(),
    output:
        csv=report(
            "results/tables/equivalence.csv",
            caption="../report/equivalence.rst",
            category="Overview",
            labels={"figure": "equivalence check (CSV)"},
        ),
        html=report(
            "results/tables/equivalence.html",
            caption="../report/equivalence.rst",
            category="Overview",
            labels={"figure": "equivalence check"},
        ),
        markdown="results/tables/equivalence.md",
    log:
        "logs/tables/equivalence.log",
    conda:
        MAIN_ENV
    params:
        settings=matrix.check_settings(config),
    script:
        "../scripts/equivalence_table.py"


rule predictions_table:
    input:
        records=inference_records(),
    output:
        csv=report(
            "results/tables/predictions.csv",
            caption="../report/predictions.rst",
            category="Overview",
            labels={"figure": "predictions from the same weights (CSV)"},
        ),
        html=report(
            "results/tables/predictions.html",
            caption="../report/predictions.rst",
            category="Overview",
            labels={"figure": "predictions from the same weights"},
        ),
        markdown="results/tables/predictions.md",
    log:
        "logs/tables/predictions.log",
    conda:
        MAIN_ENV
    params:
        settings=matrix.check_settings(config),
    script:
        "../scripts/predictions_table.py"
