"""Build .venvs/<environment> from envs/<environment>.yaml, with a version
variant's pins (rule venv); where it cannot be built, ready.json says so and
why (the runs report it)."""

import json
import os
from pathlib import Path

from dlbench.environments.venvs import build_or_report

build_or_report(
    snakemake.params.spec,
    Path(snakemake.output[0]).parent,
    snakemake.output[0],
    configured=snakemake.params.interpreters,
    log_path=snakemake.log[0],
    variant=json.loads(snakemake.params.variant),
    # not a param: how the bytecode comes is no reason to rebuild a venv
    bytecode=snakemake.config["venv_bytecode"],
    # scriptdir is workflow/rules/../scripts
    src=os.path.normpath(os.path.join(snakemake.scriptdir, "..", "..", "src")),
)
