"""The end-to-end tier: one workflow built for the session from the tests'
config (``workflows.BuiltWorkflow``), in the background where tests read
its results, and its venvs lent to the modules that run workflows of their
own."""

import pytest

from testkit import (
    BACKGROUND_READER,
    XDIST_WORKER,
    lower_session_priority,
    restore_session_priority,
)
from workflows import BuiltWorkflow

BUILT = []  # this process' built workflow


def session_root(tmp_path_factory):
    """The session's temporary folder, the same for every xdist worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if XDIST_WORKER else base


def built_for(config):
    """This process' handle on the session's built workflow."""
    if not BUILT:
        # pytest's own tmp_path_factory, which hooks are not given
        BUILT.append(BuiltWorkflow.shared(session_root(config._tmp_path_factory)))
    return BUILT[0]


def pytest_collection_finish(session):
    """Where the session has tests that read the workflow, its set-up starts
    as soon as the tests are known: the unit tests, which run first, then
    share the CPU with it at the tests' lower priority (when the first
    end-to-end test started it, the set-up waited a minute and a half for
    them on two cores that they kept half idle)."""
    if any(BACKGROUND_READER in item.fixturenames for item in session.items):
        built = built_for(session.config)
        built.workflow_wanted = True
        built.start()
        if not XDIST_WORKER:
            lower_session_priority()


def pytest_keyboard_interrupt(excinfo):
    for built in BUILT:
        built.interrupted = True


def pytest_sessionfinish(session):
    """A builder that ran no end-to-end test still waits here for the stages
    the other worker reads."""
    for built in BUILT:
        built.stop()
    if not XDIST_WORKER:
        restore_session_priority()


@pytest.fixture(scope="session", autouse=True)
def built_workflow(request):
    return built_for(request.config)


@pytest.fixture(scope="session")
def ran_workflow(built_workflow):  # BACKGROUND_READER
    """The workflow after `snakemake --configfile config/test.yaml -j2`."""
    return built_workflow.workflow()
