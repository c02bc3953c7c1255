rule code_digest:
    input:
        family_sources,
    output:
        "results/code/{family}.sha256",
    log:
        "logs/code_digest/{family}.log",
    conda:
        MAIN_ENV
    script:
        "../scripts/code_digest.py"


rule bench:
    input:
        unpack(bench_inputs),
    output:
        record=f"{RUN_DIR}/run.json",
        epochs=f"{RUN_DIR}/epochs.csv",
    log:
        f"{RUN_DIR}/bench.log",
    conda:
        run_env_file
    threads: bench_threads
    resources:
        cpu_exclusive=cpu_exclusive,
        gpu=gpus_of_run,
        runtime=run_runtime,
    params:
        spec=run_spec,
        supervisor=supervisor_python,
        python=backend_python,
        src=os.path.relpath(SRC),
        options=supervisor_options,
    shell:
        "PYTHONPATH={params.src:q} {params.supervisor} -m dlbench.supervise"
        " --python {params.python:q} --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.epochs:q} {params.options}"
        "> {log:q} 2>&1"
