rule venv:
    input:
        lambda wildcards: env_file(wildcards.environment),
    output:
        ".venvs/{environment}/ready.json",
    log:
        "logs/venv/{environment}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        interpreters=config["python_interpreters"],
    script:
        "../scripts/build_venv.py"
