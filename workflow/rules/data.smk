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


rule initial_weights:
    input:
        unpack(initial_weights_inputs),
    output:
        "results/weights/{dataset}/{model}/seed{seed}.npz",
    log:
        "logs/weights/{dataset}/{model}/seed{seed}.log",
    conda:
        env_file(KERAS_ON_TORCH)
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        python=keras_on_torch_python(),
        custom=custom_model_option,
        check=model_check_option,
        src=os.path.relpath(SRC),
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.initial_weights"
        " --model {wildcards.model:q} {params.custom} {params.check} --data {input.data:q}"
        " --seed {wildcards.seed} --output {output:q} > {log:q} 2>&1"


rule check_custom_model:
    input:
        unpack(model_check_inputs),
    output:
        "results/models/{dataset}/{model}.json",
    log:
        "logs/models/{dataset}/{model}.log",
    conda:
        env_file(KERAS_ON_TORCH)
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        python=keras_on_torch_python(),
        custom=custom_model_option,
        src=os.path.relpath(SRC),
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.model_check"
        " --model {wildcards.model:q} {params.custom} --data {input.data:q}"
        " --output {output:q} > {log:q} 2>&1"


rule trained_weights:
    input:
        unpack(trained_weights_inputs),
    output:
        "results/weights/{dataset}/{model}/trained_seed{seed}.npz",
    log:
        "logs/weights/{dataset}/{model}/trained_seed{seed}.log",
    conda:
        env_file(KERAS_ON_TORCH)
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        python=keras_on_torch_python(),
        training=trained_weights_settings,
        custom=custom_model_option,
        src=os.path.relpath(SRC),
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.trained_weights"
        " --model {wildcards.model:q} {params.custom} --data {input.data:q}"
        " --weights {input.drawn:q} --training {params.training:q}"
        " --seed {wildcards.seed} --output {output:q} > {log:q} 2>&1"
