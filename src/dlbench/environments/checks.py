"""Checking an interpreter: what it holds, as dlbench.run.envcheck reports
it from inside, compared with the env file's pins; an existing interpreter's
check (its marker), and the fingerprint that says when to check it again."""

import functools
import hashlib
import json
import os
import subprocess

from dlbench.environments.env_files import pins, read_spec
from dlbench.host import runtime


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


def interpreter_report(python, backend, distributions, src, log):
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
            held, reason = interpreter_report(python, backend, names, src, log)
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
