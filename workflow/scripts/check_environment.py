"""Check an existing interpreter for a backend (rule check_existing_environment):
what it holds against the env file's pins, or why the backend cannot run there."""

import json

from dlbench.environments.checks import check_existing

check_existing(
    snakemake.params.spec,
    snakemake.params.python,
    snakemake.params.backend,
    snakemake.output[0],
    src=snakemake.params.src,
    log_path=snakemake.log[0],
    variant=json.loads(snakemake.params.variant),
)
