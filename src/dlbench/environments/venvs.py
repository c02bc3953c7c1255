"""Building a backend's venv from its env file: the interpreter it pins,
its pip list installed (by the workflow's pip from outside where it can),
the environment's setup step, and the marker that says it is ready, or why
it is unavailable; what the build installs is the environment's identity."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from dlbench import catalog
from dlbench.environments.build_log import run_logged
from dlbench.environments.checks import interpreter_report
from dlbench.environments.env_files import EnvironmentBuildError, read_spec
from dlbench.environments.interpreters import find_python
from dlbench.environments.setup_steps import add_environment_variables, setup_step
from dlbench.host import runtime


def identity(path, variant=None):
    """What an env file installs (with a version ``variant``), without its
    comments and layout: the environment's identity. A rebuild (and a re-run
    of the backend's cells) follows a change of this, not a change of the
    file's time stamp."""
    spec = read_spec(path, variant)
    return {
        "python": spec["python"],
        "pip_version": spec["pip_version"],
        "pip": [" ".join(line.split()) for line in spec["pip"]],
        "setup_step": spec["name"] if setup_step(spec["name"]) else None,
    }


# How a venv gets its bytecode (config key venv_bytecode): "install", pip's
# default, compiles every module it installs; "first_import" compiles what a
# module's first import needs and keeps it (``first_import_bytecode``).
BYTECODE_MODES = ("install", "first_import")


def outside_pip(python_version):
    """The workflow's own pip, as a command that installs into a venv of
    ``python_version`` from outside (``pip --python``, pip 22.3 on), where
    its Requires-Python allows that Python; otherwise None. Such a venv
    needs no pip of its own: bootstrapping one (ensurepip) was a third of
    the CPU of building a torch venv (7 of 24 s on a Zen 3), and the
    workflow's pip, newer than an interpreter's bundled one, installed
    torch in 12 s of CPU against 16."""
    from importlib import metadata

    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    try:
        pip = metadata.metadata("pip")
    except metadata.PackageNotFoundError:
        return None
    if Version(pip["Version"]) < Version("22.3"):
        return None
    if not SpecifierSet(pip["Requires-Python"] or "").contains(python_version):
        return None
    return [sys.executable, "-m", "pip"]


def build_venv(
    spec_path,
    destination,
    marker,
    configured=None,
    log=sys.stdout,
    variant=None,
    bytecode="install",
    src=None,
):
    """(Re)build the venv at ``destination`` and write ``marker`` (JSON: the
    interpreter, ``pip freeze``, how it got its bytecode and when the build
    ran) only once everything installed."""
    if bytecode not in BYTECODE_MODES:
        raise ValueError("venv_bytecode: {!r} is none of {}".format(bytecode, BYTECODE_MODES))
    started = runtime.utc_now()
    spec = read_spec(spec_path, variant)
    python = find_python(spec["python"], configured)
    destination = Path(destination)
    if destination.is_symlink():  # a venv lent by another checkout: built anew here, theirs kept
        destination.unlink()
    elif destination.exists():
        shutil.rmtree(str(destination))
    venv_python = str(destination / "bin" / "python")
    # an old Python's pinned pip is the venv's own
    pip = None if spec["pip_version"] else outside_pip(spec["python"])
    if pip is None:
        # ensurepip runs the pip it bundles from its wheel, whose certifi
        # (Pythons 3.7 to 3.9) unpacks its CA bundle into a temporary file
        # that it never removes: a folder of ours takes it
        with tempfile.TemporaryDirectory() as scratch:
            in_scratch = dict(os.environ, TMPDIR=scratch)
            run_logged([python, "-m", "venv", str(destination)], log, env=in_scratch)
        pip = [venv_python, "-m", "pip"]
    else:
        run_logged([python, "-m", "venv", "--without-pip", str(destination)], log)
        pip = pip + ["--python", venv_python]
    install = pip + ["install", "--no-input"]
    if bytecode == "first_import":
        install.append("--no-compile")
    if spec["pip_version"]:  # e.g. an old Python's pip too old for today's wheels
        run_logged(install + ["pip==" + spec["pip_version"]], log)
    if spec["pip"]:
        # A requirements file, as conda hands the list to pip: option lines
        # (--extra-index-url for a CPU or CUDA build) mean the same in both.
        requirements = destination / "requirements.txt"
        requirements.write_text("\n".join(spec["pip"]) + "\n")
        run_logged(install + ["-r", str(requirements)], log)
    setup = setup_step(spec["name"])
    if setup is not None:
        setup(destination, log)
    warm_up = None
    if bytecode == "first_import":
        warm_up = first_import_bytecode(destination, spec["name"], src, log)
    freeze = subprocess.check_output(pip + ["freeze"]).decode().split()
    installer = subprocess.check_output(pip + ["--version"]).decode().strip()
    runtime.write_json_atomic(
        str(marker),
        {
            "status": "ok",
            "backend": spec["name"],
            "python": python,
            "python_version": spec["python"],
            "spec": str(spec_path),
            "variant": spec["variant"],
            "pip_freeze": freeze,
            # "pip 26.3 from <its folder> (python 3.11)": the workflow's
            # pip where it installed from outside, else the venv's own
            "installer": installer,
            "bytecode": bytecode,
            "warm_up": warm_up,
            "started": started,
            "finished": runtime.utc_now(),
        },
    )
    return venv_python


def first_import_bytecode(destination, environment, src, log):
    """A venv installed without bytecode (pip --no-compile: two thirds of
    the CPU of installing torch, 16 of 22 s on a Zen 4) keeps what each
    module's first import compiles: its processes may write bytecode, even
    where PYTHONDONTWRITEBYTECODE is set (an empty value turns it off), and
    the backend is set up once as a run sets it up (``envcheck``), so that
    the framework's and Keras' import is compiled before any run. What a run
    first imports later (torch.compile's modules, say) is compiled in that
    run's first epoch. None, or why the set-up failed (the runs say it
    again)."""
    add_environment_variables(destination, {"PYTHONDONTWRITEBYTECODE": ""})
    backend = catalog.backend_of_environment(environment)
    if backend not in catalog.BACKENDS:
        return None  # not a backend's environment: nothing to set up
    python = str(Path(destination) / "bin" / "python")
    held, reason = interpreter_report(python, backend, [], src, log)
    if reason is None and held.get("error"):
        reason = held["error"]
    return {"status": "failed" if reason else "ok", "reason": reason}


def build_or_report(
    spec_path,
    destination,
    marker,
    configured=None,
    log_path=None,
    variant=None,
    bytecode="install",
    src=None,
):
    """``build_venv``, and where it fails a marker that says the environment
    is unavailable and why: the backend's runs get a record with the reason
    and every other backend goes on."""
    with open(log_path, "w") if log_path else open(os.devnull, "w") as log:
        try:
            return build_venv(
                spec_path, destination, marker, configured, log, variant, bytecode, src
            )
        except (EnvironmentBuildError, subprocess.CalledProcessError, OSError) as error:
            log.flush()
            reason = str(error)
            if isinstance(error, subprocess.CalledProcessError) and log_path:
                with open(log_path) as written:
                    lines = [line.rstrip() for line in written if line.strip()]
                    tail = [line for line in lines if not line.startswith("WARNING")][-2:]
                    tail = [re.sub(r" \(from versions: [^)]*\)", "", line) for line in tail]
                reason = "{} ({}): {}".format(
                    " ".join(error.cmd[-3:]), error.returncode, " | ".join(tail)
                )
            print("environment unavailable: {}".format(reason), file=log, flush=True)
    shutil.rmtree(str(destination), ignore_errors=True)
    runtime.write_json_atomic(
        str(marker),
        {
            "status": "unavailable",
            "backend": read_spec(spec_path)["name"],
            "variant": dict(variant or {}),
            "reason": reason,
        },
    )
    return None
