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
        spec=targets.env_spec_path,
        variant=targets.env_variant,
        installs=targets.env_identity,
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
        spec=targets.env_spec_path,
        variant=targets.env_variant,
        pins=targets.env_identity,
        backend=lambda wildcards: catalog.backend_of_environment(wildcards.environment),
        python=targets.existing_interpreter,
        installed=targets.existing_fingerprint,
        src=targets.src,
    script:
        "../scripts/check_environment.py"
