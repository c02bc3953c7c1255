rule venv:
    output:
        ".venvs/{environment}/ready.json",
    log:
        "logs/venv/{environment}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        spec=env_spec_path,
        installs=env_identity,
        interpreters=config["python_interpreters"],
    script:
        "../scripts/build_venv.py"


rule check_existing_environment:
    output:
        "results/environments/{environment}.json",
    log:
        "logs/environments/{environment}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        spec=env_spec_path,
        pins=env_identity,
        backend=lambda wildcards: catalog.backend_of_environment(wildcards.environment),
        python=existing_interpreter,
        installed=existing_fingerprint,
        src=os.path.relpath(SRC),
    script:
        "../scripts/check_environment.py"
