"""What both tiers share: fixtures that need no backend environment, the
order of a session (unit tests first, then end to end), pytest-xdist's
scheduling, and the summary printed at the end.

tests/unit/ needs no backend environment and no Snakemake run;
tests/e2e/ (its own conftest) builds one workflow and runs it.
"""

import collections
import json
import os
import resource
from pathlib import Path

import pytest
import yaml

from dlbench.host import runtime
from dlbench.registry import Registry
from testkit import (
    BACKGROUND_CPU,
    BACKGROUND_READER,
    E2E,
    FAULT_TALLY,
    NOT_EXERCISED,
    REPO,
    XDIST_WORKER,
    lower_session_priority,
    restore_session_priority,
    stage_outcome_file,
)

# keras-torch's env asks PyTorch's CPU wheel index for every package; where
# that index is out of reach, pip's five retries per package cost minutes.
os.environ.setdefault("PIP_RETRIES", "1")


@pytest.fixture(autouse=True)
def restore_cpu_affinity():
    """harness.run pins the calling process; keep the test process unpinned."""
    cpus = os.sched_getaffinity(0)
    yield
    os.sched_setaffinity(0, cpus)


@pytest.fixture
def smoke_config():
    with open(REPO / "config" / "smoke-full.yaml") as handle:
        return yaml.safe_load(handle)


@pytest.fixture
def full_config():
    with open(REPO / "config" / "config.yaml") as handle:
        return yaml.safe_load(handle)


NUMPY_BACKEND = "numpy-test"


@pytest.fixture
def numpy_backend():
    """'numpy-test', a real numpy training loop (tests/numpy_adapter.py): the
    name of a backend that ``numpy_registry`` holds."""
    return NUMPY_BACKEND


@pytest.fixture
def numpy_registry():
    """The built-in registry with the backend 'numpy-test' beside the catalog's."""
    return Registry(
        backends={
            NUMPY_BACKEND: {
                "family": "numpy",
                "framework": "numpy",
                "adapter_module": "numpy_adapter",
                "tasks": ("train", "infer"),
            }
        }
    )


@pytest.fixture(scope="session")
def digits_npz(tmp_path_factory):
    from dlbench.data.preparation import prepare

    path = tmp_path_factory.mktemp("data") / "digits.npz"
    prepare("digits", {}, path)
    return path


def is_e2e(item):
    return E2E in Path(item.path).parents


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(config, items):
    """The session's order, module by module: first the modules that mostly
    wait (marked ``early``: on SLURM's scheduler, on pip's downloads, on a
    download's retries), so that their waits overlap the background
    workflow's work from the start; then the unit tests (they need nothing
    built), the other end-to-end modules, and last those that read the
    background workflow. A module's tests keep their order.

    pytest-xdist hands out whole modules in this order to whichever worker is
    free (``--dist loadfile --no-loadscope-reorder`` in pyproject.toml), so
    that a module's fixtures are made once. (``--dist loadgroup`` would allow
    finer units, but pytest 9's node ids no longer take xdist 3.8's group
    suffix: its groups are silently ignored.)"""
    for item in items:
        if is_e2e(item):
            item.add_marker(pytest.mark.e2e)
    modules = {}
    for item in items:
        found = modules.setdefault(_module(item), [False, is_e2e(item), False])
        found[0] = found[0] or item.get_closest_marker("early") is not None
        found[2] = found[2] or BACKGROUND_READER in item.fixturenames
    items.sort(key=lambda item: _session_place(modules[_module(item)]))


def _module(item):
    return item.nodeid.split("::")[0]


def _session_place(module):
    early, e2e, reads_the_workflow = module
    return (not early, e2e, reads_the_workflow)


def pytest_configure(config):
    if not XDIST_WORKER and getattr(config.option, "numprocesses", None):
        lower_session_priority()  # the workers' session, from the controller


def pytest_unconfigure(config):
    if not XDIST_WORKER:
        restore_session_priority()


# Wall time of each test module's tests (set-up, call and tear-down; a
# wait for the built workflow counts to the test that waited) and the CPU
# time of the processes they ran (the built workflow's stages apart). The
# process that runs a test measures it and puts it on the test's report,
# which reaches the process that prints the summary (pytest-xdist's
# controller, or the same).
MODULE_SECONDS = collections.Counter()
MODULE_CPU = collections.Counter()
# When each module's tests started and ended (epoch seconds), and where:
# the session's timeline, for its critical path.
MODULE_SPAN = {}
FAULTS_SEEN = collections.Counter()
NOT_EXERCISED_SEEN = {}
_CPU_SEEN = [0.0]
_FAULTS_REPORTED = collections.Counter()


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    now = _children_cpu()
    report.children_cpu = now - _CPU_SEEN[0] - sum(BACKGROUND_CPU)
    BACKGROUND_CPU.clear()
    _CPU_SEEN[0] = now
    report.faults = dict(collections.Counter(FAULT_TALLY) - _FAULTS_REPORTED)
    _FAULTS_REPORTED.update(report.faults)
    report.not_exercised = dict(NOT_EXERCISED)


def pytest_runtest_logreport(report):
    module = report.nodeid.split("::")[0]
    MODULE_SECONDS[module] += report.duration
    worker = getattr(getattr(getattr(report, "node", None), "gateway", None), "id", "-")
    started, stopped, _ = MODULE_SPAN.get(module, (report.start, report.stop, worker))
    MODULE_SPAN[module] = (min(started, report.start), max(stopped, report.stop), worker)
    MODULE_CPU[module] += getattr(report, "children_cpu", 0)
    FAULTS_SEEN.update(getattr(report, "faults", {}))
    NOT_EXERCISED_SEEN.update(getattr(report, "not_exercised", {}))


BUILT_OUTCOMES = {}  # stage -> its outcome; the folder that held it: BUILT_OUTCOMES["root"]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    """The built workflow's stage outcomes, read before pytest removes the
    session's folder (a session that passes: tmp_path_retention_policy)."""
    root = session.config._tmp_path_factory.getbasetemp()  # the workers' root under xdist
    BUILT_OUTCOMES["root"] = root
    for stage in ("setup", "workflow"):
        outcome_file = stage_outcome_file(root, stage)
        if outcome_file.exists():
            BUILT_OUTCOMES[stage] = json.loads(outcome_file.read_text())


def pytest_terminal_summary(terminalreporter, config):
    write = terminalreporter.write_line
    write("machine: {}, {} cores".format(runtime.cpu_model(), len(os.sched_getaffinity(0))))
    if MODULE_SECONDS:
        write(
            "time by module (wall / CPU of its processes): "
            + ", ".join(
                "{} {:.0f} / {:.0f} s".format(Path(name).name, seconds, MODULE_CPU[name])
                for name, seconds in sorted(MODULE_SECONDS.items(), key=lambda item: -item[1])
            )
        )
    first = min((started for started, _, _ in MODULE_SPAN.values()), default=0)
    if MODULE_SPAN:
        write(
            "timeline (module: worker, from - to, minutes into the session): "
            + ", ".join(
                "{} {} {:.1f}-{:.1f}".format(
                    Path(name).name, worker, (started - first) / 60, (stopped - first) / 60
                )
                for name, (started, stopped, worker) in sorted(
                    MODULE_SPAN.items(), key=lambda item: item[1][0]
                )
            )
        )
    for stage in ("setup", "workflow"):
        outcome = BUILT_OUTCOMES.get(stage)
        if outcome is None or outcome["status"] == "not made":
            continue
        ended = (outcome.get("ended", first) - first) / 60
        write(
            "built workflow: {} {} in {:.0f} s (minutes {:.1f}-{:.1f}), CPU {:.0f} s ({})".format(
                stage,
                "done" if outcome["status"] == 0 else "FAILED ({})".format(outcome["status"]),
                outcome["seconds"],
                ended - outcome["seconds"] / 60,
                ended,
                outcome["cpu"],
                BUILT_OUTCOMES["root"] / "built_workflow",
            )
        )
    if FAULTS_SEEN["tried"]:
        write(
            "fault injection: {} faults tried, {} survived, {} results lost".format(
                FAULTS_SEEN["tried"], FAULTS_SEEN["survived"], FAULTS_SEEN["lost"]
            )
        )
    for what, why in sorted(NOT_EXERCISED_SEEN.items()):
        write("not exercised on this machine: {}: {}".format(what, why))
