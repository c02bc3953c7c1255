"""Shared by the benchmark scripts: one run through the real supervisor and
harness, in a backend's venv, returning its record."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def venv_python(backend):
    return str(ROOT / ".venvs" / backend / "bin" / "python")


def with_inputs(spec, config_file):
    """``spec`` with the shared initial weights it loads made by the
    workflow's rule where they are missing, named by their absolute path."""
    weights = spec.get("initial_weights")
    if not weights:
        return spec
    if not (ROOT / weights).exists():
        snakemake = Path(sys.executable).parent / "snakemake"
        subprocess.run(
            [str(snakemake), weights, "--configfile", config_file, "-j1"], cwd=ROOT, check=True
        )
    return dict(spec, initial_weights=str(ROOT / weights))


def record_of(spec, python, data):
    """Run ``spec`` on the prepared ``data`` and return its run record."""
    with tempfile.TemporaryDirectory() as folder:
        record_path = Path(folder) / "run.json"
        subprocess.run(
            [python, "-m", "dlbench.run.supervise", "--spec", json.dumps(spec), "--data", data]
            + ["--record", str(record_path), "--epochs", str(Path(folder) / "epochs.csv")],
            env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
            check=True,
            capture_output=True,
        )
        return json.loads(record_path.read_text())
