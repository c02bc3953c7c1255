rule equivalence_check:
    input:
        unpack(targets.bench_inputs),
    output:
        record=f"{CHECK_DIR}/check.json",
        steps=f"{CHECK_DIR}/steps.csv",
    log:
        f"{CHECK_DIR}/check.log",
    conda:
        targets.run_env_file
    threads: targets.bench_threads
    resources:
        cpu_exclusive=1,
        runtime=targets.run_runtime,
        theano_compile_cache=targets.compile_cache_share("theano"),
        pytensor_compile_cache=targets.compile_cache_share("pytensor"),
    params:
        spec=targets.check_spec,
        supervisor=targets.supervisor_python,
        python=targets.backend_python,
        src=targets.src,
        options=targets.supervisor_options,
    shell:
        "PYTHONPATH={params.src:q} {params.supervisor} -m dlbench.run.supervise"
        " --python {params.python:q} --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.steps:q} {params.options}"
        "> {log:q} 2>&1"


rule equivalence_table:
    input:
        checks=targets.check_records(),
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
        settings=comparisons.check_settings(config),
    script:
        "../scripts/equivalence_table.py"


rule predictions_table:
    input:
        records=targets.inference_records(),
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
        settings=comparisons.check_settings(config),
    script:
        "../scripts/predictions_table.py"


# This file's targets (rule all): the tables of what was checked.
if targets.check_records():
    TARGETS.append(rules.equivalence_table.output.markdown)
if comparisons.predictions_compared(config):
    TARGETS.append(rules.predictions_table.output.markdown)
