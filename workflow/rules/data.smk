rule download:
    output:
        "resources/{dataset}/{filename}",
    params:
        source=raw_source,
        known_hash=known_hash,
    log:
        "logs/download/{dataset}/{filename}.log",
    script:
        "../scripts/download.py"


rule prepare:
    input:
        unpack(raw_files),
    output:
        "results/data/{dataset}.npz",
    log:
        "logs/prepare/{dataset}.log",
    resources:
        cpu_exclusive=1,
    script:
        "../scripts/prepare.py"
