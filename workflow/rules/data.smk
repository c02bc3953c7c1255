rule download:
    output:
        "resources/{dataset}/{filename}",
    log:
        "logs/download/{dataset}/{filename}.log",
    conda:
        MAIN_ENV
    params:
        source=raw_source,
        known_hash=known_hash,
    script:
        "../scripts/download.py"


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
        cpu_exclusive=1,
    script:
        "../scripts/prepare.py"
