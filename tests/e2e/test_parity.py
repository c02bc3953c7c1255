"""Every workload, in every framework that implements it, built in its own
environment as a run builds it (as algoperf's test_num_params does): its
parameter count is the workload's, and a forward pass of two samples gives
the workload's outputs; loaded with the shared initial weights
(dlbench.models.initial_weights), the same outputs as Keras 3 on torch gives from
them. The Keras definitions are built once through Keras 3 (keras-torch)
and through the Keras 2 layer on MXNet, Theano (whose convolutions flip
their kernels) and CNTK (whose recurrent loop returned an LSTM's cell state:
unrolled since)."""

import json
import subprocess
from pathlib import Path

import numpy
import parity_check as parity
import pytest
import yaml

from dlbench import catalog
from dlbench.models import workloads
from dlbench.registry import BUILT_IN
from testkit import REPO, RUN_TIMEOUT_S
from workflows import load_test_config, script_in

# run in each backend's environment, as a script: it is the tests', not the product's
PARITY_CHECK = Path(parity.__file__)

# Keras 3 on torch, the reference, and every implementation that is not
# Keras 3's: the Keras 2 backends and the native ones that run on the CPU.
IMPLEMENTATIONS = ["keras-torch"] + sorted(
    backend
    for backend, entry in catalog.BACKENDS.items()
    if catalog.BACKENDS[backend].adapter != "keras" and "gpu_only" not in entry
)


# Checked on Theano elsewhere, or built from the same Keras 2 definition
# out of layers that the workloads left in give Theano too. Theano compiles
# each forward pass with g++: the nine took 69 to 80 s of an Intel Xeon's
# CPU with an empty compile cache, the four left 65 to 70 s.
BUILT_ELSEWHERE = {
    # the tests' workflow trains it on Theano from the shared weights (its equivalence check)
    ("keras2-theano", "mlp"),
    # the tests' workflow infers with it on Theano from the same trained weights (predictions)
    ("keras2-theano", "lenet"),
    # its LSTM is hrnn's, its embedding imdb_gru's; Keras 2 on MXNet and CNTK build its two inputs
    ("keras2-theano", "babi_rnn"),
    # its loop over time (theano.scan, not unrolled) and the ops of its cell are hrnn's LSTM's;
    # Keras 2's GRU cell is the same Python on every backend (unrolled on MXNet and CNTK)
    ("keras2-theano", "imdb_gru"),
    # their convolutions ("same" and "valid", flipped kernels) and pooling are cifar_cnn's
    ("keras2-theano", "deep_mnist"),
    ("keras2-theano", "vgg_cifar"),
    # its forward pass alone took 24 s of a 2-core machine's CPU; MXNet and CNTK build it
    ("keras2-theano", "resnet50"),
}


def implemented(backend):
    """The built-in workloads the backend runs (your own models have no
    native counterpart; a workload the catalog says the framework cannot run
    is left out, with its reason), less those BUILT_ELSEWHERE."""
    return [
        model
        for model in BUILT_IN.models_of(backend)
        if model in workloads.built_in()
        and not BUILT_IN.not_applicable(backend, "train", model=model)
        and (backend, model) not in BUILT_ELSEWHERE
    ]


def test_what_is_built_elsewhere_is_built_from_the_same_definition():
    for backend, model in BUILT_ELSEWHERE:
        adapter = catalog.BACKENDS[backend].adapter
        others = [
            b for b in IMPLEMENTATIONS if b != backend and catalog.BACKENDS[b].adapter == adapter
        ]
        assert [b for b in others if model in implemented(b)], (backend, model)


def test_every_framework_is_covered():
    """Every family that computes on a CPU (native-cudnn's LeNet is checked
    against Keras on a GPU: tests/unit/test_gpu_records.py)."""
    on_a_cpu = [b for b, entry in catalog.BACKENDS.items() if "gpu_only" not in entry]
    families = {catalog.BACKENDS[backend]["family"] for backend in on_a_cpu}
    assert {catalog.BACKENDS[b]["family"] for b in IMPLEMENTATIONS} == families
    assert {catalog.BACKENDS[b].adapter for b in IMPLEMENTATIONS} == {
        catalog.BACKENDS[b].adapter for b in on_a_cpu
    }


# float32 sums in another order: measured differences up to 5e-8 of a probability
SAME_OUTPUTS = 1e-5
SEED = 7
# The workloads whose shared weights every framework's loader is asked to
# convert: those the workflow trains, and LeNet's inference. ResNet-50 is
# left out: only Keras 3 loads it (natives refuse; Keras 2 orders its
# BatchNormalization weights otherwise), and its runs say so.
WEIGHTED = sorted(
    {
        entry["model"]
        for entry in yaml.safe_load((REPO / "config" / "config.yaml").read_text())["workloads"]
        if entry.get("task", "train") == "train"
    }
    | {"lenet"}
)
# Converted by every framework's loader; the others start from their own draw (their runs say so).
LOADED_EVERYWHERE = {"mlp", "cnn", "lenet"}


@pytest.fixture(scope="module")
def shared_weights(built_workflow, tmp_path_factory):
    """Shared initial weights of every workload, drawn as the workflow draws
    them (dlbench.run.shared_weights on keras-torch)."""
    folder = tmp_path_factory.mktemp("parity_weights")
    (data,) = {path.parent for path in built_workflow.build(*parity_data())}
    python = built_workflow.venv("keras-torch") / "bin" / "python"
    draw = "\n".join(
        "shared_weights.main(['--model', '{0}', '--data', '{1}', '--seed', '{2}', "
        "'--output', '{3}'])".format(
            model, data / "{}.npz".format(parity.dataset_of(model)), SEED, folder / (model + ".npz")
        )
        for model in WEIGHTED
    )
    done = subprocess.run(
        [str(python), "-c", "from dlbench.run import shared_weights\n" + draw],
        cwd=built_workflow.path / "src",
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return folder


def run_parity(built_workflow, backend, models, weights):
    (data,) = {path.parent for path in built_workflow.build(*parity_data())}
    # Theano's and PyTensor's ops compiled with the workflow's g++ settings are in its cache
    settings = {
        key: value
        for key, value in (load_test_config()["backends"][backend] or {}).items()
        if key in ("cxxflags", "precompiled_headers")
    }
    return script_in(
        built_workflow,
        backend,
        PARITY_CHECK,
        ["--backend", backend, "--data", str(data), "--models", *models]
        + ["--weights", str(weights), "--settings", json.dumps(settings)],
    )


@pytest.fixture(scope="module")
def built_models(built_workflow, shared_weights):
    """Each backend's workloads, built once in its environment: parameters,
    output shapes, and the outputs from the shared weights (``parity``)."""
    found = {}

    def of(backend):
        if backend not in found:
            found[backend] = run_parity(
                built_workflow, backend, implemented(backend), shared_weights
            )
        return found[backend]

    return of


@pytest.fixture(scope="module")
def keras_outputs(built_models):
    """Keras 3 on torch's outputs from the shared weights, for the workloads
    that have them (WEIGHTED)."""
    found = built_models("keras-torch")
    assert {model: found[model].get("error") for model in found} == dict.fromkeys(found)
    return {
        model: numpy.array(result["outputs"])
        for model, result in found.items()
        if "outputs" in result
    }


@pytest.mark.parametrize("backend", IMPLEMENTATIONS)
def test_the_shared_weights_give_every_framework_the_same_outputs(
    built_models, keras_outputs, backend
):
    models = implemented(backend)
    found = built_models(backend)
    loaded = {model for model in models if "outputs" in found[model]}
    assert LOADED_EVERYWHERE & set(models) <= loaded, {
        m: found[m].get("error") or found[m].get("weights_error") for m in models
    }
    for model in loaded:
        difference = numpy.abs(numpy.array(found[model]["outputs"]) - keras_outputs[model]).max()
        assert difference < SAME_OUTPUTS, (backend, model, difference)
    print(backend, "loads", sorted(loaded), "not", sorted(set(models) - loaded))


@pytest.mark.parametrize("backend", IMPLEMENTATIONS)
def test_workloads_agree_across_frameworks(built_models, backend):
    models = implemented(backend)
    found = built_models(backend)
    assert {model: found[model].get("error") for model in models} == dict.fromkeys(models)
    assert {m: found[m]["parameters"] for m in models} == {
        m: found[m]["expected_parameters"] for m in models
    }
    assert {m: found[m]["output_shape"] for m in models} == {
        m: found[m]["expected_output_shape"] for m in models
    }


def parity_data():
    return ["results/data/{}.npz".format(dataset) for dataset in sorted(parity.DATASETS.values())]
