"""Finding an interpreter of the Python version an env file pins: the
config's, one on PATH, or pyenv's."""

import glob
import os
import shutil
import subprocess
import sys

from dlbench.environments.env_files import EnvironmentBuildError


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
