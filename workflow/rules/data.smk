rule download:
    output:
        "resources/{dataset}/{filename}",
    log:
        "logs/download/{dataset}/{filename}.log",
    wildcard_constraints:
        dataset=DOWNLOADED,
    conda:
        MAIN_ENV
    params:
        source=raw_source,
        known_hash=known_hash,
        hash_record=hash_record,
    script:
        "../scripts/download.py"


rule generate:
    input:
        code=FIXTURES_CODE,
    output:
        "resources/{dataset}/{filename}",
    log:
        "logs/generate/{dataset}/{filename}.log",
    wildcard_constraints:
        dataset=GENERATED,
    conda:
        MAIN_ENV
    params:
        like=lambda wildcards: catalog.DATASETS[wildcards.dataset]["like"],
        sizes=lambda wildcards: catalog.DATASETS[wildcards.dataset]["generated"],
    script:
        "../scripts/generate.py"


rule prepare:
    input:
        unpack(prepare_inputs),
    output:
        "results/data/{dataset}.npz",
    log:
        "logs/prepare/{dataset}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        synthetic=lambda wildcards: config["synthetic_datasets"].get(wildcards.dataset),
    script:
        "../scripts/prepare.py"
