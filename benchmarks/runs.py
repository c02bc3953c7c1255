"""Shared by the benchmark scripts: one run through the real supervisor and
harness, in a backend's venv, returning its record."""

import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def venv_python(backend):
    return str(ROOT / ".venvs" / backend / "bin" / "python")


def record_of(spec, python, data):
    """Run ``spec`` on the prepared ``data`` and return its run record."""
    with tempfile.TemporaryDirectory() as folder:
        record_path = Path(folder) / "run.json"
        subprocess.run(
            [python, "-m", "dlbench.supervise", "--spec", json.dumps(spec), "--data", data]
            + ["--record", str(record_path), "--epochs", str(Path(folder) / "epochs.csv")],
            env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"},
            check=True,
            capture_output=True,
        )
        return json.loads(record_path.read_text())
