rule code_digest:
    input:
        targets.family_sources,
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
        unpack(targets.bench_inputs),
    output:
        record=f"{RUN_DIR}/run.json",
        epochs=f"{RUN_DIR}/epochs.csv",
        ops=f"{RUN_DIR}/ops.json",
    log:
        f"{RUN_DIR}/bench.log",
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
        options=targets.supervisor_options,
    shell:
        # How far the runs have come, before this run's clocks start.
        "PYTHONPATH={params.src:q} {params.supervisor} -m dlbench.plan.progress; "
        "PYTHONPATH={params.src:q} {params.supervisor} -m dlbench.run.supervise"
        " --python {params.python:q} --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.epochs:q} --ops {output.ops:q}"
        " {params.options}> {log:q} 2>&1"


# The runs each timed run counts as it starts (dlbench.plan.progress).
onstart:
    progress.write_planned(records_to_make())
