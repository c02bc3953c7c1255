"""What the tests need from the machine beyond the Python packages of
``.venv``, and installing it where this machine can.

- Debian's ``chromium`` and ``chromium-driver``: the report's browser check;
- ``slurm-wlm`` and ``munge`` (and root): the single-node SLURM of
  tests/e2e/test_slurm.py;
- ``g++``: Theano's and PyTensor's compiled graphs;
- ``apt-get`` and ``dpkg``: keras2-cntk's OpenMPI step downloads Debian
  packages into its venv;
- a Python of every minor version the backends' env files pin (3.6, 3.7,
  3.9, 3.11): on PATH as ``pythonX.Y``, under pyenv, or named in the config;
- free disk space where pytest keeps its temporary folders: the session's
  built workflow holds every backend's venv and the tests' workflow's results.

``make test`` runs this with ``--install`` before pytest: on Debian as root it
installs the missing packages with apt-get; anywhere else it stops at once
with the exact command to run. A test that still lacks something (pytest run
by hand) is skipped with the reason, which ``-ra`` prints in the summary.

    .venv/bin/python tests/system_requirements.py            # what is missing
    .venv/bin/python tests/system_requirements.py --install  # and install it
"""

import argparse
import getpass
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from dlbench.environments import env_files, interpreters  # noqa: E402

# What each group of tests needs: programs, and the Debian packages with them.
NEEDS = {
    "browser": {
        "programs": ["/usr/bin/chromium", "/usr/bin/chromedriver"],
        "packages": ["chromium", "chromium-driver"],
        "for": "the report's browser check",
    },
    "slurm": {
        "programs": ["munged", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue"],
        "packages": ["slurm-wlm", "munge"],
        "for": "the single-node SLURM of tests/e2e/test_slurm.py",
    },
    "compiler": {
        "programs": ["g++"],
        "packages": ["g++"],
        "for": "Theano's and PyTensor's compiled graphs",
    },
    "debian": {
        "programs": ["apt-get", "dpkg"],
        "packages": [],
        "for": "keras2-cntk's OpenMPI step (apt-get download, dpkg -x)",
    },
}


def absent_programs(group):
    return [
        program
        for program in NEEDS[group]["programs"]
        if not (os.access(program, os.X_OK) if os.path.isabs(program) else shutil.which(program))
    ]


def missing(group):
    """Why the tests of ``group`` cannot run here, or None."""
    absent = absent_programs(group)
    if not absent:
        return None
    packages = NEEDS[group]["packages"]
    how = " (Debian: apt-get install {})".format(" ".join(packages)) if packages else ""
    return "{} needs {}, not installed{}; make test installs it".format(
        NEEDS[group]["for"], ", ".join(absent), how
    )


def missing_packages():
    """The Debian packages that would bring what is absent."""
    return sorted(
        {
            package
            for group in NEEDS
            if absent_programs(group)
            for package in NEEDS[group]["packages"]
        }
    )


def pinned_pythons():
    """The minor versions of Python the backends' CPU env files pin."""
    cpu_envs = [path for path in (REPO / "envs").glob("*.yaml") if ".cuda." not in path.name]
    return sorted(
        {env_files.read_spec(path)["python"] for path in cpu_envs},
        key=lambda version: tuple(int(part) for part in version.split(".")),
    )


def missing_pythons():
    absent = []
    for version in pinned_pythons():
        try:
            interpreters.find_python(version)
        except env_files.EnvironmentBuildError:
            absent.append(version)
    return absent


# The session's folder (tests/e2e/workflows.py, BuiltWorkflow) held 9.8 GB at
# the end of a whole make test (2026-11-25: 9.2 of them venvs; 13.4 GB when
# the tests ran the smoke); the clean clone's .venv adds 0.7. pytest
# keeps the newest session's folder (pyproject.toml: tmp_path_retention_count)
# and removes the older ones when a session ends, so the last session's
# folder is still there while the next one runs.
SESSION_FOLDER_GB = 16


def disk_space_problem(temporary=None):
    """Why the tests' temporary folder has too little room, or None."""
    temporary = temporary or tempfile.gettempdir()
    free_gb = shutil.disk_usage(temporary).free / 1e9
    if free_gb >= SESSION_FOLDER_GB:
        return None
    return (
        "{:.0f} GB free in {} where the tests' session needs about {} GB (every backend's venv "
        "and the tests' workflow's results): free some (older sessions' folders are in {}), or "
        "point TMPDIR at a larger disk".format(
            free_gb,
            temporary,
            SESSION_FOLDER_GB,
            os.path.join(temporary, "pytest-of-{}".format(getpass.getuser())),
        )
    )


def apt_install(packages):
    environment = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-q"], check=True, env=environment)
    subprocess.run(["apt-get", "install", "-y", "-q"] + packages, check=True, env=environment)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install what is missing")
    args = parser.parse_args(argv)
    packages = missing_packages()
    debian = not absent_programs("debian")
    if packages and args.install and debian and os.geteuid() == 0:
        print("installing for the tests: {}".format(" ".join(packages)), flush=True)
        apt_install(packages)
        packages = missing_packages()
    problems = []
    if not debian:
        problems.append(
            "not a Debian/Ubuntu machine: {}. Install the equivalents of Debian's {} and "
            "put them on PATH (chromium and chromedriver at /usr/bin)".format(
                missing("debian"),
                " ".join(p for group in NEEDS.values() for p in group["packages"]),
            )
        )
    elif packages:
        problems.append(
            "run: sudo apt-get install -y {}  ({})".format(
                " ".join(packages),
                "; ".join(missing(group) for group in NEEDS if absent_programs(group)),
            )
        )
    pythons = missing_pythons()
    if pythons:
        problems.append(
            "no Python {v} for the backends' environments: run "
            "{commands} (or put pythonX.Y on PATH)".format(
                v=", ".join(pythons),
                commands=" && ".join("pyenv install {}".format(v) for v in pythons),
            )
        )
    space = disk_space_problem()
    if space:
        problems.append(space)
    for problem in problems:
        print("system requirements: " + problem, file=sys.stderr)
    if problems:
        print(
            "system requirements: missing, so `make test` stops here. `.venv/bin/pytest -ra` "
            "runs the rest and names each test it had to skip.",
            file=sys.stderr,
        )
        return 1
    print("system requirements: all present")
    return 0


if __name__ == "__main__":
    sys.exit(main())
