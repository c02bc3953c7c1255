"""The code style the project promises: ruff (lint and format), snakefmt and
snakemake --lint clean."""

import subprocess
import sys
from pathlib import Path

from testkit import REPO

BIN = Path(sys.executable).parent


def run(*command):
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


SOURCES = ("src", "tests", "workflow/scripts", "benchmarks")


def test_ruff():
    done = run(str(BIN / "ruff"), "check", *SOURCES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format():
    done = run(str(BIN / "ruff"), "format", "--check", *SOURCES)
    assert done.returncode == 0, done.stdout + done.stderr


def test_snakefmt():
    done = run(str(BIN / "snakefmt"), "--check", "Snakefile", "workflow/rules")
    assert done.returncode == 0, done.stdout + done.stderr


def test_snakemake_lint():
    done = run(str(BIN / "snakemake"), "--lint", "--configfile", "config/smoke-full.yaml")
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "Congratulations" in output, output
