rule download:
    output:
        "resources/{dataset}/{filename}",
    log:
        "logs/download/{dataset}/{filename}.log",
    wildcard_constraints:
        dataset="|".join(
            d for d in plan.registry.datasets if plan.registry.downloaded(d)
        ),
    conda:
        MAIN_ENV
    params:
        source=plan.raw_source,
        known_hash=plan.known_hash,
        hash_record=plan.hash_record,
    script:
        "../scripts/download.py"


rule generate:
    input:
        code=plan.code("data/stand_ins"),
    output:
        "resources/{dataset}/{filename}",
    log:
        "logs/generate/{dataset}/{filename}.log",
    wildcard_constraints:
        dataset="|".join(
            d for d in plan.registry.datasets if plan.registry.generated(d)
        ),
    conda:
        MAIN_ENV
    params:
        like=lambda wildcards: plan.registry.datasets[wildcards.dataset]["like"],
        sizes=lambda wildcards: plan.registry.datasets[wildcards.dataset]["generated"],
    script:
        "../scripts/generate.py"


rule prepare:
    input:
        unpack(plan.prepare_inputs),
    output:
        "results/data/{dataset}.npz",
    log:
        "logs/prepare/{dataset}.log",
    conda:
        MAIN_ENV
    resources:
        cpu_exclusive=targets.SETUP_SHARE,
    params:
        synthetic=lambda wildcards: config["synthetic_datasets"].get(wildcards.dataset),
    script:
        "../scripts/prepare.py"


rule initial_weights:
    input:
        unpack(plan.initial_weights_inputs),
    output:
        "results/weights/{dataset}/{model}/seed{seed}.npz",
    log:
        "logs/weights/{dataset}/{model}/seed{seed}.log",
    conda:
        plan.env_file(targets.KERAS_ON_TORCH)
    resources:
        cpu_exclusive=targets.SETUP_SHARE,
    params:
        python=plan.keras_on_torch_python(),
        custom=plan.custom_model_option,
        check=plan.model_check_option,
        src=plan.src,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.shared_weights"
        " --model {wildcards.model:q} {params.custom} {params.check} --data {input.data:q}"
        " --seed {wildcards.seed} --output {output:q} > {log:q} 2>&1"


rule check_custom_model:
    input:
        unpack(plan.model_check_inputs),
    output:
        "results/models/{dataset}/{model}.json",
    log:
        "logs/models/{dataset}/{model}.log",
    conda:
        plan.env_file(targets.KERAS_ON_TORCH)
    resources:
        cpu_exclusive=targets.SETUP_SHARE,
    params:
        python=plan.keras_on_torch_python(),
        custom=plan.custom_model_option,
        src=plan.src,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.model_check"
        " --model {wildcards.model:q} {params.custom} --data {input.data:q}"
        " --output {output:q} > {log:q} 2>&1"


rule trained_weights:
    input:
        unpack(plan.trained_weights_inputs),
    output:
        "results/weights/{dataset}/{model}/trained_seed{seed}.npz",
    log:
        "logs/weights/{dataset}/{model}/trained_seed{seed}.log",
    conda:
        plan.env_file(targets.KERAS_ON_TORCH)
    resources:
        cpu_exclusive=targets.SETUP_SHARE,
    params:
        python=plan.keras_on_torch_python(),
        training=plan.trained_weights_settings,
        custom=plan.custom_model_option,
        src=plan.src,
    shell:
        "PYTHONPATH={params.src:q} {params.python:q} -m dlbench.run.trained_weights"
        " --model {wildcards.model:q} {params.custom} --data {input.data:q}"
        " --weights {input.drawn:q} --training {params.training:q}"
        " --seed {wildcards.seed} --output {output:q} > {log:q} 2>&1"
