rule venv:
    output:
        ".venvs/{environment}/ready.json",
    log:
        "logs/venv/{environment}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=targets.SETUP_SHARE,
    params:
        spec=plan.env_spec_path,
        variant=plan.env_variant,
        installs=plan.env_identity,
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
        cpu_exclusive=targets.SETUP_SHARE,
    params:
        spec=plan.env_spec_path,
        variant=plan.env_variant,
        pins=plan.env_identity,
        backend=lambda wildcards: catalog.backend_of_environment(wildcards.environment),
        python=plan.existing_interpreter,
        installed=plan.existing_fingerprint,
        src=plan.src,
    script:
        "../scripts/check_environment.py"
