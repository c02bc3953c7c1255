rule venv:
    input:
        lambda wildcards: backend_env_file(wildcards.backend),
    output:
        ".venvs/{backend}/ready.json",
    log:
        "logs/venv/{backend}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=1,
    params:
        interpreters=config["python_interpreters"],
    script:
        "../scripts/build_venv.py"
