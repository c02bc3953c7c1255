"""Every workload, in every framework that implements it, built in its own
environment as a run builds it (as algoperf's test_num_params does): its
parameter count is the workload's, and a forward pass of two samples gives
the workload's outputs. The Keras definitions are built once through Keras 3
(keras-torch) and once through the Keras 2 layer (keras-mxnet)."""

import json
import os
import subprocess

import pytest

from conftest import RUN_TIMEOUT_S
from dlbench import catalog, parity, runtime, workloads

pytestmark = pytest.mark.e2e

IMPLEMENTATIONS = [
    "keras-torch",
    "keras-mxnet",
    "native-torch",
    "native-tensorflow",
    "native-jax",
    "native-mxnet",
    "native-pytensor",
    "native-chainer",
    "native-cntk",
]


def implemented(backend):
    # your own models (custom_models) are the Keras family's too, but have no native counterpart
    return [model for model in catalog.models_of(backend) if model in workloads.built_in()]


def test_every_framework_is_covered():
    families = {catalog.BACKENDS[backend]["family"] for backend in catalog.BACKENDS}
    assert {catalog.BACKENDS[b]["family"] for b in IMPLEMENTATIONS} == families
    assert {catalog.adapter_of(b) for b in IMPLEMENTATIONS} == {
        catalog.adapter_of(b) for b in catalog.BACKENDS
    }


@pytest.mark.parametrize("backend", IMPLEMENTATIONS)
def test_workloads_agree_across_frameworks(built_workflow, backend):
    venv = built_workflow.venv(backend)
    python = venv / "bin" / "python"
    # what the environment asks for before it starts (CNTK's OpenMPI), as the supervisor gives it
    env = dict(os.environ, **runtime.environment_additions(str(venv), os.environ))
    (data,) = {path.parent for path in built_workflow.build(*parity_data())}
    models = implemented(backend)
    done = subprocess.run(
        [str(python), "-m", "dlbench.parity", "--backend", backend, "--data", str(data)]
        + ["--models", *models],
        cwd=built_workflow.path / "src",
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert {model: found[model].get("error") for model in models} == dict.fromkeys(models)
    assert {m: found[m]["parameters"] for m in models} == {
        m: found[m]["expected_parameters"] for m in models
    }
    assert {m: found[m]["output_shape"] for m in models} == {
        m: found[m]["expected_output_shape"] for m in models
    }


def parity_data():
    return ["results/data/{}.npz".format(dataset) for dataset in sorted(parity.DATASETS.values())]
