"""The end-to-end tier: one workflow built for the session from the tests'
config (``workflows.BuiltWorkflow``), in the background where tests read
its results, and its venvs lent to the modules that run workflows of their
own."""

import pytest

from testkit import XDIST_WORKER, lower_session_priority, restore_session_priority
from workflows import BuiltWorkflow

BUILT = []  # this process' built workflow


def session_root(tmp_path_factory):
    """The session's temporary folder, the same for every xdist worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if XDIST_WORKER else base


def pytest_keyboard_interrupt(excinfo):
    for built in BUILT:
        built.interrupted = True


@pytest.fixture(scope="session", autouse=True)
def built_workflow(request, tmp_path_factory):
    built = BuiltWorkflow.shared(session_root(tmp_path_factory))
    built.workflow_wanted = any(
        "ran_workflow" in item.fixturenames for item in request.session.items
    )
    if built.workflow_wanted:
        built.start()
        if not XDIST_WORKER:
            lower_session_priority()
    BUILT.append(built)
    yield built
    built.stop()
    if not XDIST_WORKER:
        restore_session_priority()


@pytest.fixture(scope="session")
def ran_workflow(built_workflow):
    """The workflow after `snakemake --configfile config/test.yaml -j2`."""
    return built_workflow.workflow()
