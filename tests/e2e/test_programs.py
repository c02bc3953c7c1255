"""Each family's program (dlbench/models/programs) runs in every backend
environment of the tests' workflow, called by the backend's adapter as a
timed run calls it: one epoch of three batches of the digits MLP and an
inference call. The lines-of-code table counts these functions, so the
code it counts is the code that runs (tests/unit/test_lines.py checks that
the count follows only that code)."""

import json
import math
from pathlib import Path

import program_check
import pytest

from workflows import load_test_config, script_in

PROGRAM_CHECK = Path(program_check.__file__)
BACKENDS = sorted(load_test_config()["backends"])
# the adapter settings that change what runs (Theano's and PyTensor's g++
# settings find their compiled ops in the workflow's cache)
SETTINGS = ("jit_compile", "cxxflags", "precompiled_headers")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_program_runs_in_the_backends_environment(built_workflow, backend):
    (digits,) = built_workflow.build("results/data/digits.npz")
    settings = {
        key: value
        for key, value in (load_test_config()["backends"][backend] or {}).items()
        if key in SETTINGS
    }
    found = script_in(
        built_workflow,
        backend,
        PROGRAM_CHECK,
        ["--backend", backend, "--data", str(digits), "--settings", json.dumps(settings)],
    )
    # every function the count starts from ran, the epoch's loop once
    for name in found["training"] + found["inference"]:
        assert found["calls"].get(name, 0) >= 1, (name, found["calls"])
    if found["trained"]:
        assert found["calls"]["train_epoch"] == 1
        assert math.isfinite(found["loss"]) and found["loss"] > 0
        assert 0.0 <= found["accuracy"] <= 1.0
    else:
        assert not set(found["calls"]) - set(found["inference"])
    # two rows of class probabilities
    assert len(found["output_rows"]) == 2
    assert found["output_rows"] == pytest.approx([1.0, 1.0], abs=1e-3)
