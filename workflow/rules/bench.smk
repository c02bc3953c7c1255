rule bench:
    input:
        data="results/data/{dataset}.npz",
        env=env_ready,
        code=bench_code,
    output:
        record=f"{RUN_DIR}/run.json",
        epochs=f"{RUN_DIR}/epochs.csv",
    params:
        spec=run_spec,
        python=backend_python,
    log:
        f"{RUN_DIR}/bench.log",
    conda:
        "../../envs/{backend}.yaml"
    threads: workflow.cores
    resources:
        cpu_exclusive=cpu_exclusive,
    shell:
        "PYTHONPATH={SRC:q} {params.python} -m dlbench.supervise"
        " --spec {params.spec:q} --data {input.data:q}"
        " --record {output.record:q} --epochs {output.epochs:q}"
        " --timeout-minutes {config[timeout_minutes]} > {log:q} 2>&1"
