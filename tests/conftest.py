import copy
import os
import shutil
from pathlib import Path

import pytest
import yaml

from dlbench import backends, catalog

REPO = Path(__file__).resolve().parents[1]
# keras-torch's env asks PyTorch's CPU wheel index for every package; where
# that index is out of reach, pip's five retries per package cost minutes.
os.environ.setdefault("PIP_RETRIES", "1")
WORKFLOW_PARTS = ("Snakefile", "workflow", "envs", "config", "profiles", "src")


@pytest.fixture(autouse=True)
def restore_cpu_affinity():
    """harness.run pins the calling process; keep the test process unpinned."""
    cpus = os.sched_getaffinity(0)
    yield
    os.sched_setaffinity(0, cpus)


@pytest.fixture
def smoke_config():
    with open(REPO / "config" / "smoke.yaml") as handle:
        return yaml.safe_load(handle)


@pytest.fixture
def full_config():
    with open(REPO / "config" / "config.yaml") as handle:
        return yaml.safe_load(handle)


@pytest.fixture
def numpy_backend(monkeypatch):
    """Registers 'numpy-test', a real numpy training loop (tests/numpy_adapter.py)."""
    monkeypatch.setitem(catalog.BACKENDS, "numpy-test", {"family": "numpy", "framework": "numpy"})
    monkeypatch.setitem(backends.ADAPTERS, "numpy", "numpy_adapter")
    return "numpy-test"


@pytest.fixture(scope="session")
def digits_npz(tmp_path_factory):
    from dlbench.data import prepare

    path = tmp_path_factory.mktemp("data") / "digits.npz"
    prepare("digits", {}, path)
    return path


def copy_workflow(destination):
    """A private copy of the workflow, so tests may edit env files and configs."""
    destination = Path(destination)
    for part in WORKFLOW_PARTS:
        source = REPO / part
        if source.is_dir():
            shutil.copytree(
                source,
                destination / part,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        else:
            shutil.copy2(source, destination / part)
    return destination


def write_config(path, config):
    with open(path, "w") as handle:
        yaml.safe_dump(copy.deepcopy(config), handle, sort_keys=False)
    return path


# What the fault-injection tests (test_faults.py) tried, how many of the
# faults the workflow survived (the fault's run recorded with its reason,
# everything else done) and how many results were lost; printed at the end.
FAULT_TALLY = {"tried": 0, "survived": 0, "lost": 0}


def pytest_terminal_summary(terminalreporter):
    if FAULT_TALLY["tried"]:
        terminalreporter.write_line(
            "fault injection: {tried} faults tried, {survived} survived, {lost} results "
            "lost".format(**FAULT_TALLY)
        )
