"""Backend environments from ``envs/<backend>.yaml``, without conda.

The conda spec is the single source of truth: its ``python=X.Y`` pin picks the
interpreter and its ``pip:`` list is installed into ``.venvs/<backend>``.
"""

import functools
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from dlbench import catalog
from dlbench.environments import variants
from dlbench.host import runtime


class EnvironmentBuildError(RuntimeError):
    """An environment that cannot be built, with what is missing."""


def read_spec(path, variant=None):
    """An env file's python and pip pins; with ``variant`` ({distribution:
    version}, dlbench.environments.variants), those versions instead."""
    with open(path) as handle:
        spec = yaml.safe_load(handle)
    python, pip_version, pip = None, None, []
    for dependency in spec.get("dependencies", []):
        if isinstance(dependency, dict):
            pip.extend(dependency.get("pip", []))
            continue
        match = re.match(r"^(python|pip)\s*=+\s*(\d+\.\d+(?:\.\d+)?)", str(dependency))
        if match and match.group(1) == "python":
            python = ".".join(match.group(2).split(".")[:2])
        elif match:
            pip_version = match.group(2)
    if python is None:
        raise EnvironmentBuildError("{}: no 'python=X.Y' pin among its dependencies".format(path))
    return {
        "name": spec.get("name", Path(path).stem),
        "python": python,
        "pip_version": pip_version,
        "pip": variants.apply(pip, variant) if variant else pip,
        "variant": dict(variant or {}),
    }


def variant_env_file(path, variant):
    """An env file's text with a version variant's pins in its pip list."""
    with open(path) as handle:
        spec = yaml.safe_load(handle)
    for dependency in spec.get("dependencies", []):
        if isinstance(dependency, dict) and "pip" in dependency:
            dependency["pip"] = variants.apply(dependency["pip"], variant)
    header = "# {} with {} (generated from it; the config's versions)\n".format(
        Path(path).name, variants.label(variant)
    )
    return header + yaml.safe_dump(spec, sort_keys=False)


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


def pins(spec):
    """The pip requirements of a spec (``read_spec``), option lines left out."""
    from packaging.requirements import Requirement

    return [Requirement(line) for line in spec["pip"] if not line.strip().startswith("-")]


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


def _run(command, log, env=None):
    print("$ " + " ".join(command), file=log, flush=True)
    subprocess.run(command, check=True, stdout=log, stderr=subprocess.STDOUT, env=env)


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
    if destination.exists():
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
            _run([python, "-m", "venv", str(destination)], log, env=in_scratch)
        pip = [venv_python, "-m", "pip"]
    else:
        _run([python, "-m", "venv", "--without-pip", str(destination)], log)
        pip = pip + ["--python", venv_python]
    install = pip + ["install", "--no-input"]
    if bytecode == "first_import":
        install.append("--no-compile")
    if spec["pip_version"]:  # e.g. an old Python's pip too old for today's wheels
        _run(install + ["pip==" + spec["pip_version"]], log)
    if spec["pip"]:
        # A requirements file, as conda hands the list to pip: option lines
        # (--extra-index-url for a CPU or CUDA build) mean the same in both.
        requirements = destination / "requirements.txt"
        requirements.write_text("\n".join(spec["pip"]) + "\n")
        _run(install + ["-r", str(requirements)], log)
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


def add_environment_variables(destination, variables):
    """Variables the runs in the environment at ``destination`` get
    (``runtime.ENVIRONMENT_ADDITIONS``, applied by the supervisor), beside
    those it already asks for."""
    path = Path(destination) / runtime.ENVIRONMENT_ADDITIONS
    wanted = json.loads(path.read_text()) if path.exists() else {}
    wanted.update(variables)
    path.write_text(json.dumps(wanted, indent=2))


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
    held, reason = _interpreter_report(python, backend, [], src, log)
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


def _installed(package):
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True
    )
    return done.returncode == 0 and "install ok installed" in done.stdout


def _with_dependencies(packages):
    """Debian packages and everything they depend on (alternatives too)."""
    listed = subprocess.run(
        ["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests"]
        + ["--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances"]
        + list(packages),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted({line for line in listed.splitlines() if line and line[0] not in " <"})


OPENMPI_PACKAGES = ("libopenmpi3", "libhwloc15")
# CNTK 2.7 was linked against OpenMPI 1.10; OpenMPI 4 (Debian 12) provides
# what it calls under newer sonames.
OPENMPI_COMPAT_LINKS = {"libmpi.so.12": "libmpi.so.40", "libmpi_cxx.so.1": "libmpi_cxx.so.40"}


def openmpi_for_cntk(destination, log):
    """Give CNTK the OpenMPI 1.10 libraries it links against: Debian's
    OpenMPI 4 packages and what they need that the system lacks, downloaded
    and unpacked into the environment (no root needed), the old sonames
    linked to the new libraries, and LD_LIBRARY_PATH recorded for the runs
    (``runtime.ENVIRONMENT_ADDITIONS``, applied by the supervisor)."""
    destination = Path(destination).resolve()
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        raise EnvironmentBuildError(
            "keras2-cntk needs OpenMPI 4's libmpi.so.40 and libmpi_cxx.so.40 (Debian/Ubuntu: "
            "libopenmpi3, libhwloc15) under CNTK's old names; this build step uses apt-get "
            "download and dpkg, which this machine lacks"
        )
    missing = [p for p in _with_dependencies(OPENMPI_PACKAGES) if not _installed(p)]
    unpacked = destination / "openmpi"
    downloads = destination / "openmpi-debs"
    downloads.mkdir(parents=True, exist_ok=True)
    if missing:
        print("$ apt-get download " + " ".join(missing), file=log, flush=True)
        subprocess.run(
            ["apt-get", "download"] + missing,
            cwd=str(downloads),
            check=True,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    for deb in sorted(downloads.glob("*.deb")):
        _run(["dpkg", "-x", str(deb), str(unpacked)], log)
    shutil.rmtree(str(downloads))
    candidates = sorted(unpacked.glob("usr/lib/*/libmpi.so.40")) + sorted(
        Path("/usr/lib").glob("*/libmpi.so.40")
    )
    if not candidates:
        raise EnvironmentBuildError("no libmpi.so.40 after unpacking {}".format(missing))
    library_dir = candidates[0].parent
    compat = destination / "lib" / "openmpi-compat"
    compat.mkdir(parents=True, exist_ok=True)
    for old, new in OPENMPI_COMPAT_LINKS.items():
        link = compat / old
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(library_dir / new)
    # OpenMPI's own dependencies were unpacked beside it (or are the system's)
    add_environment_variables(destination, {"LD_LIBRARY_PATH": [str(compat), str(library_dir)]})
    print("OpenMPI for CNTK: {} -> {}".format(sorted(OPENMPI_COMPAT_LINKS), library_dir), file=log)


# The steps a backend's environment may need after its pip packages are
# installed, by the name its catalog entry gives (``environment_setup``).
SETUP_STEPS = {"openmpi_for_cntk": openmpi_for_cntk}


def setup_step(environment):
    """The step the environment's backend names, or None."""
    entry = catalog.BACKENDS.get(catalog.backend_of_environment(environment), {})
    return SETUP_STEPS.get(entry.get("environment_setup"))


def compare_with_pins(spec, held):
    """The differences between what an interpreter holds (``envcheck``'s
    report) and what the env file pins, as sentences; empty when it matches."""
    from packaging.specifiers import InvalidSpecifier
    from packaging.version import InvalidVersion, Version

    mismatches = []
    python = ".".join(held["python_version"].split(".")[:2])
    if python != spec["python"]:
        mismatches.append("Python {} (env file: {})".format(python, spec["python"]))
    for requirement in pins(spec):
        installed = held["installed"].get(requirement.name)
        if installed is None:
            mismatches.append(
                "{}: not installed (env file: {})".format(requirement.name, requirement.specifier)
            )
            continue
        try:
            # PEP 440 ignores a local label the pin does not name: ==2.13.0
            # admits 2.13.0+cpu, which is not the CUDA build the pin means.
            exact = [s for s in requirement.specifier if s.operator in ("==", "===")]
            pinned_local = {s.version.partition("+")[2] for s in exact}
            same_build = not exact or (Version(installed).local or "") in pinned_local
            satisfied = requirement.specifier.contains(installed, prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            same_build, satisfied = True, installed in str(requirement.specifier)
        if not (satisfied and same_build):
            mismatches.append(
                "{} {} (env file: {})".format(requirement.name, installed, requirement.specifier)
            )
    return mismatches


def _interpreter_report(python, backend, distributions, src, log):
    """Run ``dlbench.run.envcheck`` under ``python``; its report, or the reason
    there is none."""
    from dlbench.run import envcheck

    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    )
    env.update(runtime.thread_environment(1))
    env.update(runtime.environment_additions(runtime.prefix_of(python), env))
    command = [python, "-m", "dlbench.run.envcheck", "--backend", backend, "--distributions"]
    command += distributions
    print("$ " + " ".join(command), file=log, flush=True)
    try:
        done = subprocess.run(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900
        )
    except OSError as error:
        return None, "interpreter {} cannot run: {}".format(python, error)
    except subprocess.TimeoutExpired:
        return None, "interpreter {} did not answer within 900 s".format(python)
    output = done.stdout.decode("utf-8", "replace")
    log.write(output)
    for line in reversed(output.splitlines()):
        if line.startswith(envcheck.MARK):
            return json.loads(line[len(envcheck.MARK) :]), None
    tail = " | ".join(line for line in output.splitlines()[-3:] if line.strip())
    return None, "interpreter {} exited with status {}: {}".format(python, done.returncode, tail)


# What an installer leaves beside a distribution (and a path configuration
# file, which may add folders).
INSTALLED = (".dist-info", ".egg-info", ".egg-link", ".pth")


@functools.lru_cache(maxsize=None)
def interpreter_fingerprint(python):
    """The interpreter and the distributions' metadata in the folders on its
    path: installing, upgrading or removing a package changes their names.
    Not the folders' times: the interpreter's first import of a module at a
    folder's top (``six``, ``typing_extensions``) makes its ``__pycache__``
    there, which would have every interpreter checked again after its first
    run. Cheap (nothing is imported), so the workflow can ask at every start."""
    found = [os.path.realpath(python)]
    try:
        listed = subprocess.run(
            [python, "-c", "import json, sys; print(json.dumps(sys.path))"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        folders = json.loads(listed.stdout) if listed.returncode == 0 else []
    except (OSError, subprocess.SubprocessError, ValueError):
        folders = []
    for folder in folders:
        if os.path.isdir(folder):
            metadata = sorted(name for name in os.listdir(folder) if name.endswith(INSTALLED))
            found.append("{}:{}".format(folder, ",".join(metadata)))
    return hashlib.sha256("\n".join(found).encode()).hexdigest()


def check_existing(spec_path, python, backend, marker, src, log_path=None, variant=None):
    """Check an existing interpreter for a backend and write ``marker``: what
    it holds (framework, Keras, CUDA, cuDNN, the pinned distributions), how
    that differs from the env file's pins, and ``unavailable`` with the
    reason when the backend cannot be set up with it."""
    spec = read_spec(spec_path, variant)
    record = {
        "mode": "existing",
        "variant": spec["variant"],
        "backend": backend,
        "environment": spec["name"],
        "spec": str(spec_path),
        "python": python,
        "checked": runtime.utc_now(),
    }
    with open(log_path, "w") if log_path else open(os.devnull, "w") as log:
        held, reason = None, None
        if not (os.path.isfile(python) and os.access(python, os.X_OK)):
            reason = "interpreter {} not found or not executable".format(python)
        else:
            names = [requirement.name for requirement in pins(spec)]
            held, reason = _interpreter_report(python, backend, names, src, log)
        if held is not None:
            record.update(
                python_version=held["python_version"],
                versions=held.get("versions"),
                installed=held["installed"],
                mismatches=compare_with_pins(spec, held),
            )
            if held.get("error"):
                reason = "{} cannot set up {}: {}".format(python, backend, held["error"])
        record["status"] = "unavailable" if reason else "ok"
        record["reason"] = reason
        print(json.dumps(record, indent=2), file=log)
    runtime.write_json_atomic(str(marker), record)
    return record
