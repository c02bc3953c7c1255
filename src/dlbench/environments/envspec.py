"""The environments' functions by the one name the workflow, the planning
and the tests import them by (``dlbench.environments.envspec``); each is its
own module's: ``env_files`` (reading envs/<backend>.yaml), ``interpreters``
(a Python of the pinned version found), ``venvs`` (a venv built, or why
not), ``setup_steps`` (what an environment needs after pip) and ``checks``
(an interpreter checked against its env file)."""

from dlbench.environments.checks import (
    check_existing,
    compare_with_pins,
    interpreter_fingerprint,
)
from dlbench.environments.env_files import (
    EnvironmentBuildError,
    pins,
    read_spec,
    variant_env_file,
)
from dlbench.environments.interpreters import find_python
from dlbench.environments.setup_steps import SETUP_STEPS
from dlbench.environments.venvs import build_or_report, build_venv, identity, outside_pip

__all__ = [
    "SETUP_STEPS",
    "EnvironmentBuildError",
    "build_or_report",
    "build_venv",
    "check_existing",
    "compare_with_pins",
    "find_python",
    "identity",
    "interpreter_fingerprint",
    "outside_pip",
    "pins",
    "read_spec",
    "variant_env_file",
]
