rule bench:
    input:
        data="results/data/{dataset}.npz",
        env=env_ready,
        code=bench_code,
    output:
        record=f"{RUN_DIR}/run.json",
        epochs=f"{RUN_DIR}/epochs.csv",
    log:
        f"{RUN_DIR}/bench.log",
    conda:
        "../../envs/{backend}.yaml"
    threads: BENCH_THREADS
    resources:
        cpu_exclusive=cpu_exclusive,
        runtime=config["timeout_minutes"],
    params:
        spec=run_spec,
        python=backend_python,
        src=os.path.relpath(SRC),
    shell:
        "PYTHONPATH={params.src:q} {params.python} -m dlbench.supervise"
        " --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.epochs:q}"
        " --timeout-minutes {resources.runtime} > {log:q} 2>&1"
