"""Build .venvs/<backend> from envs/<backend>.yaml (rule venv)."""

from pathlib import Path

from dlbench.envspec import build_venv

with open(snakemake.log[0], "w") as log:
    build_venv(
        snakemake.input[0],
        Path(snakemake.output[0]).parent,
        snakemake.output[0],
        configured=snakemake.params.interpreters,
        log=log,
    )
