"""Backend environments from ``envs/<backend>.yaml``, without conda.

The conda spec is the single source of truth: its ``python=X.Y`` pin picks the
interpreter and its ``pip:`` list is installed into ``.venvs/<backend>``.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml


class EnvironmentBuildError(RuntimeError):
    """An environment that cannot be built, with what is missing."""


def read_spec(path):
    with open(path) as handle:
        spec = yaml.safe_load(handle)
    python, pip = None, []
    for dependency in spec.get("dependencies", []):
        if isinstance(dependency, dict):
            pip.extend(dependency.get("pip", []))
        else:
            match = re.match(r"^python\s*=+\s*(\d+\.\d+)", str(dependency))
            if match:
                python = match.group(1)
    if python is None:
        raise EnvironmentBuildError("{}: no 'python=X.Y' pin among its dependencies".format(path))
    return {"name": spec.get("name", Path(path).stem), "python": python, "pip": pip}


def _version_of(executable):
    try:
        out = subprocess.check_output(
            [executable, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.decode().strip()


def python_candidates(version, configured=None):
    configured = configured or {}
    if version in configured:
        yield configured[version]
    found = shutil.which("python" + version)
    if found:
        yield found
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    for path in sorted(
        glob.glob(os.path.join(pyenv_root, "versions", version + ".*", "bin", "python"))
    ):
        yield path
    if "{}.{}".format(*sys.version_info[:2]) == version:
        yield sys.executable


def find_python(version, configured=None):
    """An interpreter of minor version ``version``: the config's
    ``python_interpreters`` first, then ``pythonX.Y`` on PATH, then pyenv."""
    tried = []
    for candidate in python_candidates(version, configured):
        tried.append(candidate)
        if _version_of(candidate) == version:
            return candidate
    raise EnvironmentBuildError(
        "no Python {v} found (tried: {tried}). Install it (e.g. `pyenv install {v}`), put "
        "python{v} on PATH, or name it in the config: python_interpreters: "
        '{{"{v}": /path/to/python{v}}}'.format(v=version, tried=", ".join(tried) or "nothing")
    )


def _run(command, log):
    print("$ " + " ".join(command), file=log, flush=True)
    subprocess.run(command, check=True, stdout=log, stderr=subprocess.STDOUT)


def build_venv(spec_path, destination, marker, configured=None, log=sys.stdout):
    """(Re)build the venv at ``destination`` and write ``marker`` (JSON: the
    interpreter and ``pip freeze``) only once everything installed."""
    spec = read_spec(spec_path)
    python = find_python(spec["python"], configured)
    destination = Path(destination)
    if destination.exists():
        shutil.rmtree(str(destination))
    _run([python, "-m", "venv", str(destination)], log)
    venv_python = str(destination / "bin" / "python")
    if spec["pip"]:
        _run([venv_python, "-m", "pip", "install", "--no-input"] + spec["pip"], log)
    freeze = subprocess.check_output([venv_python, "-m", "pip", "freeze"]).decode().split()
    with open(marker, "w") as handle:
        json.dump(
            {
                "backend": spec["name"],
                "python": python,
                "python_version": spec["python"],
                "spec": str(spec_path),
                "pip_freeze": freeze,
            },
            handle,
            indent=2,
        )
    return venv_python
