"""The equivalence check catches real mistakes: each test runs the check, as
the workflow does, on one backend with a mistake put into it (a wrong
optimizer setting, an optimizer's state started wrong, a layer without its bias),
in its own environment with the shared weights of the digits workloads,
beside the checks the tests' workflow made on backends that compute as
Keras 3 does, and the mistaken one must be the one that departs. The same
for inference: LeNet's trained weights loaded with the dense layer's rows
left in Keras' flattening order, beside the workflow's LeNet runs. And two
framework rules the check found, measured where they arise."""

import copy
import json
import subprocess

import pytest

from dlbench.analysis import equivalence_predictions, equivalence_steps
from dlbench.environments.variants import PINNED
from dlbench.models.layers import MAX_POOL_TIES
from dlbench.plan import comparisons, matrix, paths, run_spec
from dlbench.run.backends.keras_on import tensorflow as keras_on_tensorflow
from dlbench.run.backends.keras_on import theano as keras_on_theano
from testkit import RUN_TIMEOUT_S
from workflows import harness_with, load_test_config

CONFIG = matrix.normalise(load_test_config())

# Backends whose update rules for RMSprop (mlp) and Adadelta (cnn) are Keras 3's.
CORRECT = ["keras-torch", "keras-jax", "native-tensorflow"]

# Patches applied in the backend's process before the harness runs.
MISTAKES = {
    # Keras 3's default learning rate for Adadelta where the workload says 1.0
    "adadelta_default_learning_rate": None,  # a setting, not a patch: see check()
    # optax's RMSprop with its second moment starting at 1 (TensorFlow 1's
    # RMSProp did), not at 0 as Keras'. (Epsilon's place, the mistake this
    # case put in before, is a rule the check now makes vanish.)
    "second_moment_starting_at_one": (
        "import optax\n"
        "rmsprop = optax.rmsprop\n"
        "optax.rmsprop = lambda *args, **kw: rmsprop(*args, **dict(kw, initial_scale=1.0))\n"
    ),
    # the output layer's bias held at zero: a Dense layer without its bias
    "output_layer_without_bias": (
        "from dlbench.run.backends import native_torch_adapter\n"
        "load = native_torch_adapter.Adapter.load_initial_weights\n"
        "def without_bias(self, model, layout, weights):\n"
        "    load(self, model, layout, weights)\n"
        "    linear = [m for m in model['net'].modules() if isinstance(m, self.torch.nn.Linear)]\n"
        "    linear[-1].bias.data.zero_()\n"
        "    linear[-1].bias.requires_grad_(False)\n"
        "native_torch_adapter.Adapter.load_initial_weights = without_bias\n"
    ),
    # a channels-first port that flattens (channels, height, width) but keeps
    # the dense rows Keras' (height, width, channels) flattening ordered
    "flatten_order_not_converted": (
        "from dlbench.models import initial_weights\n"
        "dense_out_in = initial_weights.dense_out_in\n"
        "initial_weights.dense_out_in = lambda kernel, flattened_from=None: dense_out_in(kernel)\n"
    ),
}
CASES = [
    ("adadelta_default_learning_rate", "cnn", "keras-jax"),
    ("second_moment_starting_at_one", "mlp", "native-jax"),
    ("output_layer_without_bias", "cnn", "native-torch"),
]


@pytest.fixture(scope="module")
def harness_run(ran_workflow, built_workflow, tmp_path_factory):
    """Runs the harness on the digits in ``backend``'s venv, with the
    run's shared weights from the built workflow and ``mistake`` put into
    its process first; the run's record."""
    folder = tmp_path_factory.mktemp("mistakes")
    data = built_workflow.path / "results/data/digits.npz"
    found = {}

    def run(spec, mistake=None):
        backend, model = spec["backend"], spec["model"]
        key = (spec["task"], model, backend, mistake)
        if key in found:
            return found[key]
        spec = copy.deepcopy(spec)  # it shares the config's dicts
        weights, _ = built_workflow.build(spec["initial_weights"], "results/data/digits.npz")
        spec["initial_weights"] = str(weights)
        if mistake == "adadelta_default_learning_rate":
            spec["hyper"]["optimizer"]["learning_rate"] = 0.001
        name = "{}-{}-{}-{}".format(spec["task"], model, backend, mistake or "correct")
        record = harness_with(
            built_workflow,
            backend,
            spec,
            data,
            folder / (name + ".json"),
            folder / (name + ".csv"),
            MISTAKES.get(mistake) or "",
        )
        found[key] = dict(record, backend=name)
        return found[key]

    return run


def workflow_check(model, backend):
    """The tests' workflow's equivalence-check run of ``model`` on ``backend``."""
    (run,) = [
        run
        for run in comparisons.check_runs(CONFIG)
        if (run.dataset, run.model, run.backend, run.versions) == ("digits", model, backend, PINNED)
    ]
    return run


@pytest.fixture(scope="module")
def checked(ran_workflow, harness_run):
    """The check of ``model`` on ``backend``: the workflow's record, or with
    ``mistake`` a run of the same spec with the mistake put in."""

    def check(model, backend, mistake=None):
        run = workflow_check(model, backend)
        if mistake is None:
            found = json.loads((ran_workflow / paths.check_dir(run) / "check.json").read_text())
            return dict(found, backend="{}-{}-correct".format(model, backend))
        return harness_run(run_spec.check_spec(CONFIG, run).as_json(), mistake)

    return check


@pytest.mark.parametrize("mistake, model, backend", CASES)
def test_a_mistake_departs_and_the_correct_backends_do_not(checked, mistake, model, backend):
    correct = [checked(model, b) for b in CORRECT]
    mistaken = checked(model, backend, mistake)
    table = equivalence_steps.compare(correct + [mistaken]).set_index("backend")
    shown = ["largest_relative_difference", "at_step", "first_step_beyond_tolerance", "verdict"]
    print(table[shown].to_string())
    assert table.loc[mistaken["backend"], "verdict"].startswith("DEPARTS at step"), table
    assert (
        table.drop(index=mistaken["backend"])["verdict"] == equivalence_steps.VERDICT_SAME
    ).all()
    # the same forward pass from the same weights: the mistake is in the steps
    assert table.loc[mistaken["backend"], "first_step_beyond_tolerance"] >= 1


def test_a_flatten_order_left_unconverted_departs_in_predictions(ran_workflow, harness_run):
    """LeNet's trained weights on native torch with the dense rows after the
    flattened feature map in Keras' order, not torch's: its predictions
    depart; the workflow's correct backends predict the same."""
    run = matrix.Run(
        "digits", "lenet", "native-torch", threads=1, repeat=1, machine=matrix.machine_name(CONFIG)
    )
    records = [
        json.loads((ran_workflow / paths.run_dir(run._replace(backend=b)) / "run.json").read_text())
        for b in CORRECT + ["native-torch"]
    ]
    spec = run_spec.spec(CONFIG, run).as_json()
    spec["hyper"] = dict(spec["hyper"], warmup=1, latency_samples=2, throughput_batches=1)
    records.append(harness_run(spec, "flatten_order_not_converted"))
    table = equivalence_predictions.compare_predictions(records).set_index("backend")
    print(table[["largest_difference", "classes_differing", "verdict"]].to_string())
    mistaken = records[-1]["backend"]
    assert table.loc[mistaken, "verdict"].startswith("DEPARTS"), table
    assert table.loc[mistaken, "classes_differing"] > 0
    correct = table.drop(index=mistaken)
    assert (correct["verdict"] == equivalence_predictions.VERDICT_SAME_PREDICTIONS).all(), correct


SPARSE_ADAM = """
import json, os, sys
import numpy as np
os.environ["KERAS_BACKEND"] = sys.argv[1]
import keras
from dlbench.run.backends import keras_adapter

words = np.array([[1, 1, 2, 3]])  # word 1 twice in the batch
model = keras.Sequential(
    [keras.Input((4,), dtype="int32"), keras.layers.Embedding(5, 2), keras.layers.Flatten(),
     keras.layers.Dense(1, kernel_initializer="ones")]
)
model.layers[0].set_weights([np.arange(10, dtype="float32").reshape(5, 2) / 10])
start = [w.copy() for w in model.get_weights()]
adapter = keras_adapter.Adapter(sys.argv[1], {})
found = {"own_rules": adapter.own_rules(model, "adam")}
for name in ("velocity", "velocity_in_the_check"):
    model.set_weights(start)
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
    if name == "velocity_in_the_check":  # as the equivalence check prepares it
        adapter.applied["own_rules"] = found["own_rules"]
        found["check_settings"] = adapter.prepare_check(model, {})
    model.train_on_batch(words, np.ones((1, 1)))
    velocity = [v for v in model.optimizer.variables if "velocity" in v.path][0]
    found[name] = np.asarray(velocity)[1].tolist()
print(json.dumps(found))
"""


def test_keras_on_tensorflow_squares_an_embeddings_gradient_per_occurrence(built_workflow):
    """What the check found on babi_rnn, imdb_gru and imdb_transformer: after
    one Adam step on a word seen twice in the batch (gradient g at each
    place), Keras 3 on torch holds (g + g)^2 (1 - beta_2) in its second
    moment, on TensorFlow (g^2 + g^2) (1 - beta_2), half of it; the
    adapter records this as TensorFlow's own rule, and under the
    equivalence check hands the optimizer the gradient dense, as torch's."""
    found = {}
    for backend in ("keras-tensorflow", "keras-torch"):
        venv = built_workflow.venv(backend)
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-c", SPARSE_ADAM, backend.split("-", 1)[1]],
            cwd=built_workflow.path / "src",
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        found[backend] = json.loads(done.stdout.strip().splitlines()[-1])
    tensorflow, torch = found["keras-tensorflow"], found["keras-torch"]
    assert tensorflow["velocity"] == pytest.approx([v / 2 for v in torch["velocity"]], rel=1e-5)
    assert tensorflow["own_rules"] == [keras_on_tensorflow.SPARSE_SQUARES]
    assert torch["own_rules"] == []
    # the equivalence check densifies the gradient: then TensorFlow's is torch's
    assert tensorflow["velocity_in_the_check"] == pytest.approx(torch["velocity"], rel=1e-5)
    assert tensorflow["check_settings"] == {
        "dense_gradients": "Embedding gradients densified before the optimizer"
    }
    assert torch["velocity_in_the_check"] == torch["velocity"]
    assert torch["check_settings"] == {}


THEANO_GRADIENTS = """
import json
import sys
import numpy as np
from dlbench.run import launch
from dlbench.run.backends import keras2_adapter

adapter = keras2_adapter.Adapter("theano", json.loads(sys.argv[1]))
# Theano's flags, as a run's
adapter.setup(threads=1, seed=0, devices=0, parallel=launch.one_process_on_the_cpu())
import keras
from keras import backend as K

inputs = keras.layers.Input((2, 2, 1))
# a 1x1 convolution of weight 1 (the identity), then ReLU as the workloads apply it
relu = keras.layers.Conv2D(1, 1, activation="relu", use_bias=False, kernel_initializer="ones")
model = keras.models.Model(inputs, keras.layers.MaxPooling2D(2)(relu(inputs)))
gradient = K.function([inputs], K.gradients(K.sum(model.output), [inputs]))
found = {
    name: gradient([np.full((1, 2, 2, 1), value, "float32")])[0].ravel().tolist()
    for name, value in (("at_zero", 0.0), ("tied", 1.0))
}
found["own_rules"] = adapter.own_rules(model, "adadelta")
print(json.dumps(found))
"""


def test_theano_sends_a_tied_maximums_gradient_everywhere_and_relus_half_at_zero(built_workflow):
    """What the check found on the digits CNN in Keras 2 on Theano, measured
    on one 2x2 window: the gradient of max(relu(window)) reaches all four
    tied inputs (Keras 3's backends: one), and at 0 each gets 0.5, ReLU's
    gradient there (Keras 3's: 0); the adapter records both rules. (The
    tests' workflow leaves Theano's CNN check out: 98 s of CPU on an Intel
    Xeon, most of it g++ compiling its training graph; native PyTensor's CNN
    check still sees the tied maxima.)"""
    venv = built_workflow.venv("keras2-theano")
    done = subprocess.run(
        # the tests' config's settings: ops of the workflow's in its compile cache
        [
            str(venv / "bin" / "python"),
            "-c",
            THEANO_GRADIENTS,
            json.dumps(load_test_config()["backends"]["keras2-theano"] or {}),
        ],
        cwd=built_workflow.path / "src",
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["tied"] == [1.0] * 4
    assert found["at_zero"] == [0.5] * 4
    assert found["own_rules"] == [MAX_POOL_TIES, keras_on_theano.THEANO_RELU]
