rule download:
    output:
        "resources/{dataset}/{filename}",
    log:
        "logs/download/{dataset}/{filename}.log",
    wildcard_constraints:
        dataset="|".join(
            d for d in targets.registry.datasets if targets.registry.downloaded(d)
        ),
    conda:
        MAIN_ENV
    params:
        source=targets.raw_source,
        known_hash=targets.known_hash,
        hash_record=targets.hash_record,
    script:
        "../scripts/download.py"


rule generate:
    input:
        code=targets.code("data/stand_ins"),
    output:
        "resources/{dataset}/{filename}",
    log:
        "logs/generate/{dataset}/{filename}.log",
    wildcard_constraints:
        dataset="|".join(
            d for d in targets.registry.datasets if targets.registry.generated(d)
        ),
    conda:
        MAIN_ENV
    params:
        like=lambda wildcards: targets.registry.datasets[wildcards.dataset]["like"],
        sizes=lambda wildcards: targets.registry.datasets[wildcards.dataset][
            "generated"
        ],
    script:
        "../scripts/generate.py"


rule prepare:
    input:
        unpack(targets.prepare_inputs),
    output:
        "results/data/{dataset}.npz",
    log:
        "logs/prepare/{dataset}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        definition=targets.dataset_definition,
    script:
        "../scripts/prepare.py"


rule initial_weights:
    input:
        unpack(targets.initial_weights_inputs),
    output:
        "results/weights/{dataset}/{model}/seed{seed}.npz",
    log:
        "logs/weights/{dataset}/{model}/seed{seed}.log",
    conda:
        targets.env_file(KERAS_ON_TORCH)
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        python=targets.keras_on_torch_python(),
        custom=targets.custom_model_option,
        check=targets.model_check_option,
        src=targets.src,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.shared_weights"
        " --model {wildcards.model:q} {params.custom} {params.check} --data {input.data:q}"
        " --seed {wildcards.seed} --output {output:q} > {log:q} 2>&1"


rule check_custom_model:
    input:
        unpack(targets.model_check_inputs),
    output:
        "results/models/{dataset}/{model}.json",
    log:
        "logs/models/{dataset}/{model}.log",
    conda:
        targets.env_file(KERAS_ON_TORCH)
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        python=targets.keras_on_torch_python(),
        custom=targets.custom_model_option,
        src=targets.src,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.model_check"
        " --model {wildcards.model:q} {params.custom} --data {input.data:q}"
        " --output {output:q} > {log:q} 2>&1"


rule trained_weights:
    input:
        unpack(targets.trained_weights_inputs),
    output:
        "results/weights/{dataset}/{model}/trained_seed{seed}.npz",
    log:
        "logs/weights/{dataset}/{model}/trained_seed{seed}.log",
    conda:
        targets.env_file(KERAS_ON_TORCH)
    resources:
        cpu_exclusive=SETUP_SHARE,
    params:
        python=targets.keras_on_torch_python(),
        training=targets.trained_weights_settings,
        custom=targets.custom_model_option,
        src=targets.src,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.trained_weights"
        " --model {wildcards.model:q} {params.custom} --data {input.data:q}"
        " --weights {input.drawn:q} --training {params.training:q}"
        " --seed {wildcards.seed} --output {output:q} > {log:q} 2>&1"
