"""Build .venvs/<environment> from envs/<environment>.yaml, with a version
variant's pins (rule venv); where it cannot be built, ready.json says so and
why (the runs report it)."""

import json
from pathlib import Path

from dlbench.environments.envspec import build_or_report

build_or_report(
    snakemake.params.spec,
    Path(snakemake.output[0]).parent,
    snakemake.output[0],
    configured=snakemake.params.interpreters,
    log_path=snakemake.log[0],
    variant=json.loads(snakemake.params.variant),
)
