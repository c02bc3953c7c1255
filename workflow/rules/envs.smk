rule venv:
    input:
        lambda wildcards: backend_env_file(wildcards.backend),
    output:
        ".venvs/{backend}/ready.json",
    params:
        interpreters=config["python_interpreters"],
    log:
        "logs/venv/{backend}.log",
    resources:
        cpu_exclusive=1,
    script:
        "../scripts/build_venv.py"
