"""What the tests of both tiers share: the repository, real run records kept
as fixtures, configs written for a test, run record paths."""

import compileall
import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import system_requirements
from dlbench.host import runtime
from dlbench.plan import matrix, paths
from dlbench.record import contract

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
E2E = TESTS / "e2e"

# make test runs the tests in two processes (pytest-xdist); this one's name
# there (gw0, gw1), None where pytest runs them all itself.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")

# This machine's name as the workflow derives it (machine: auto).
MACHINE = matrix.machine_name({})

# Real run records (a Keras training run, a native inference run, and the
# failed, timed-out and unavailable records of the fault suite), kept so that
# the code that reads records is tested on what the harness really writes.
FIXTURE_RECORDS = TESTS / "fixtures" / "records"

# Tests that open a report in Chromium; where it is missing they are skipped
# and the summary (pytest -ra) says why.
needs_browser = pytest.mark.skipif(
    system_requirements.missing("browser") is not None,
    reason=str(system_requirements.missing("browser")),
)

# What the fault-injection tests (e2e/test_faults.py) tried, how many of the
# faults the workflow survived (the fault's run recorded with its reason,
# everything else done) and how many results were lost; printed at the end.
FAULT_TALLY = {"tried": 0, "survived": 0, "lost": 0}

# CPU seconds of each stage of the background workflow, as it ends: the
# tests' own CPU time leaves them out.
BACKGROUND_CPU = []

# What an end-to-end test found this machine cannot exercise, and why
# (a precision its CPU has no kernels for): printed at the end.
NOT_EXERCISED = {}


def run_json(dataset, model, backend, devices=0, repeat=1, machine=MACHINE, **dimensions):
    """A run record's path in a workflow folder."""
    run = matrix.Run(
        dataset, model, backend, devices=devices, repeat=repeat, machine=machine, **dimensions
    )
    return paths.run_dir(run) + "/run.json"


def fixture_record(name, **changes):
    """A real run record (``tests/fixtures/records/<name>.json``, version 2),
    changed, read as the current version as collect reads it."""
    record = contract.read(json.loads((FIXTURE_RECORDS / "{}.json".format(name)).read_text()))
    record.update(changes)
    return record


def write_config(path, config):
    with open(path, "w") as handle:
        yaml.safe_dump(copy.deepcopy(config), handle, sort_keys=False)
    return path


def stage_outcome_file(root, stage):
    """Where the built workflow's builder writes a stage's outcome (e2e)."""
    return Path(root) / "built_workflow.{}.json".format(stage)


# The fixture of the end-to-end tests that read the workflow the session
# builds in the background (tests/e2e/conftest.py): they run last, so that
# every other test runs while it is made.
BACKGROUND_READER = "ran_workflow"

SESSION_NICE = []  # the session group's nice value before it was lowered
# The priority of the tests' processes beside the background workflow.
TESTS_NICENESS = 10


def lower_session_priority():
    """Linux shares the CPU between sessions (autogroups) before it looks at a
    process' nice value, and the background workflow is a session of its
    own: niced in the tests' session only, the tests took half the CPU from
    its timed runs. So the tests' session group is niced too, where it can
    be restored (root)."""
    if os.geteuid() == 0 and not SESSION_NICE:
        SESSION_NICE.append(runtime.autogroup_nice())
        runtime.set_autogroup_nice(TESTS_NICENESS)


def restore_session_priority():
    if SESSION_NICE:
        runtime.set_autogroup_nice(SESSION_NICE.pop())


# The benchmark scripts come with the workflow: run in a built copy, they
# find its venvs and results as they find the repository's.
WORKFLOW_PARTS = ("Snakefile", "workflow", "envs", "config", "profiles", "src", "benchmarks")
WORKFLOW_PARTS += ("examples", "tests/report_browser.py")
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

# Time-outs of whole Snakemake invocations in the tests. No healthy
# invocation comes near them: they exist only so that a hung invocation
# fails its test with its output instead of stalling CI.
WORKFLOW_TIMEOUT_S = 3 * 3600
SETUP_TIMEOUT_S = 3600
INVOCATION_TIMEOUT_S = 3600
# One run started by a test outside Snakemake (seconds to a minute).
RUN_TIMEOUT_S = 600


def jobs_planned_on_one_gpu(config):
    """{rule: jobs} that ``snakemake -n --forceall`` plans for ``config`` in
    the repository, as on a GPU machine (one GPU, as its
    CUDA_VISIBLE_DEVICES says): every job, whatever results/ holds."""
    done = subprocess.run(
        [SNAKEMAKE, "-n", "--forceall", "--configfile", str(config)],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env=dict(os.environ, CUDA_VISIBLE_DEVICES="0"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", done.stdout, re.M)}


def copy_workflow(destination, venvs_from=None, environments=(), source=REPO):
    """A private copy of the workflow (of the repository, or of the workflow
    folder ``source``), so tests may edit env files and configs. The named
    ``environments`` are linked from the built workflow ``venvs_from``
    instead of built again: Snakemake finds their venvs ready (and newer than
    the copied env files, which keep their times)."""
    destination = Path(destination)
    for part in WORKFLOW_PARTS:
        source_part = Path(source) / part
        if source_part.is_dir():
            shutil.copytree(
                source_part,
                destination / part,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        else:
            (destination / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source_part, destination / part)
    # Compiled once here: the copy's Snakemake, scripts and supervisors run in
    # .venv, where PYTHONDONTWRITEBYTECODE (set on CI's machines) would have
    # each of them compile the library's modules it imports again.
    if (destination / "src").is_dir():
        compileall.compile_dir(str(destination / "src"), quiet=1)
    for environment in environments:
        built = Path(venvs_from) / ".venvs" / environment
        assert (built / "ready.json").exists(), "no venv built at {}".format(built)
        (destination / ".venvs").mkdir(exist_ok=True)
        (destination / ".venvs" / environment).symlink_to(built, target_is_directory=True)
    return destination


# Snakemake's own rate-limit span for the tests' short invocations: with the
# workflow profile's 5 s each would wait up to 5 s for its timers after its
# last job (profiles/default/config.yaml says why the profile has it; the
# built workflow's runs keep it).
QUICK_EXIT = ("--max-jobs-per-timespan", "100/1s")


def run_snakemake(workdir, *args, check=True, timeout=INVOCATION_TIMEOUT_S, **popen):
    """Snakemake in ``workdir``; its output in the assertion when it fails."""
    done = subprocess.run(
        [SNAKEMAKE, *QUICK_EXIT, *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        **popen,
    )
    if check and done.returncode != 0:
        raise AssertionError(
            "snakemake {} failed:\n{}\n{}".format(args, done.stdout[-3000:], done.stderr[-6000:])
        )
    return done
