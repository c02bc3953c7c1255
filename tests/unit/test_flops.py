"""Analytic FLOPs per sample (dlbench.models.flops): hand-computed numbers, the
relations between forward and training, dims read from prepared datasets,
and (e2e) equality with PyTorch's own counter for every model."""

import numpy as np
import pytest

from dlbench.data import preparation, stand_ins
from dlbench.models import flops, workloads
from dlbench.registry import BUILT_IN

BABI_DIMS = {"story_length": 171, "query_length": 5, "vocabulary": 36, "classes": 36}


def test_mlp_by_hand():
    forward = 784 * 512 + 512 * 512 + 512 * 10
    weight_gradients = forward
    input_gradients = 512 * 512 + 512 * 10  # none for the first layer, fed with the data
    assert flops.per_sample("mlp", {}) == {
        "forward": 2 * forward,
        "training": 2 * (forward + weight_gradients + input_gradients),
    }
    assert flops.per_sample("mlp", {})["forward"] == 1337344


def test_lenet_by_hand():
    conv1 = 24 * 24 * (5 * 5 * 1) * 20  # 28 -> 24, pooled to 12
    conv2 = 8 * 8 * (5 * 5 * 20) * 50  # 12 -> 8, pooled to 4
    dense1, dense2 = 4 * 4 * 50 * 500, 500 * 10
    forward = conv1 + conv2 + dense1 + dense2
    assert flops.per_sample("lenet", {}) == {
        "forward": 2 * forward,
        "training": 2 * (2 * forward + conv2 + dense1 + dense2),
    }


def test_recurrent_state_gradient_skips_the_constant_initial_state():
    """An LSTM of 4 units over 5 steps of 3 inputs, fed by an embedding."""
    gates = 4 * 4
    forward = 5 * (3 + 4) * gates
    layer = flops.recurrent("lstm", steps=5, inputs=3, units=4)
    assert layer.multiply_adds == forward
    assert layer.input_gradient == 5 * 3 * gates + 4 * 4 * gates
    on_data = flops.recurrent("lstm", steps=5, inputs=3, units=4, on_data=True)
    assert on_data.input_gradient == 4 * 4 * gates


def test_babi_follows_the_story_length_and_vocabulary():
    longer = dict(BABI_DIMS, story_length=BABI_DIMS["story_length"] + 1)
    one_step = 2 * 4 * 100 * (50 + 100)
    assert (
        flops.per_sample("babi_rnn", longer)["forward"]
        - flops.per_sample("babi_rnn", BABI_DIMS)["forward"]
        == one_step
    )
    wider = dict(BABI_DIMS, classes=BABI_DIMS["classes"] + 1)
    assert (
        flops.per_sample("babi_rnn", wider)["forward"]
        - flops.per_sample("babi_rnn", BABI_DIMS)["forward"]
        == 2 * 200
    )


def test_babi_needs_its_dims():
    with pytest.raises(KeyError, match="story_length"):
        flops.per_sample("babi_rnn", {"vocabulary": 36, "classes": 36})


@pytest.mark.parametrize("model", workloads.built_in())
def test_training_is_forward_plus_up_to_twice_forward(model):
    """Weight gradients cost a forward pass; input gradients less than one
    (the first layer needs none)."""
    counted = flops.per_sample(model, BABI_DIMS if model == "babi_rnn" else {})
    assert counted["forward"] > 0
    assert 2 * counted["forward"] < counted["training"] < 3 * counted["forward"]


def test_resnet50_has_its_53_convolutions_and_ends_at_7x7():
    layers = workloads.facts("resnet50").flop_layers(flops.spec_of("resnet50", {}))
    assert len(layers) == 1 + 16 * 3 + 4  # stem, 16 bottlenecks, 4 projection shortcuts
    last = 7 * 7 * 512 * 2048  # the last 1x1 convolution: 512 -> 2048 on 7x7
    assert layers[-1].multiply_adds == last


@pytest.fixture(scope="session")
def prepared(tmp_path_factory, digits_npz):
    """A prepared dataset of each input kind (image224 has none: its shape is fixed)."""
    root = tmp_path_factory.mktemp("flops_data")
    stand_ins.cifar_binary_archive(root / "c.tar.gz", per_batch=10, test=10)
    preparation.prepare(
        "cifar10_tiny", {"cifar-10-binary.tar.gz": root / "c.tar.gz"}, root / "c.npz"
    )
    stand_ins.imdb_npz(root / "i.npz", train=20, test=10)
    preparation.prepare("imdb_tiny", {"imdb.npz": root / "i.npz"}, root / "imdb.npz")
    stand_ins.babi_archive(root / "b.tar.gz", train=50, test=20)
    preparation.prepare(
        "babi_tiny", {"babi_tasks_1-20_v1-2.tar.gz": root / "b.tar.gz"}, root / "b.npz"
    )
    return {
        "image28": digits_npz,
        "image32": root / "c.npz",
        "words150": root / "imdb.npz",
        "story_question": root / "b.npz",
    }


def test_dims_of_prepared_datasets(prepared):
    assert flops.dims_of(prepared["image28"], "mlp") == {"input_shape": [28, 28, 1], "classes": 10}
    assert flops.dims_of(prepared["image32"], "vgg_cifar") == {
        "input_shape": [32, 32, 3],
        "classes": 10,
    }
    assert flops.dims_of(prepared["words150"], "imdb_gru") == {
        "input_shape": [150],
        "classes": 2,
        "vocabulary": 30000,
    }
    babi = flops.dims_of(prepared["story_question"], "babi_rnn")
    with np.load(prepared["story_question"]) as arrays:
        assert babi["story_length"] == arrays["x_train__story"].shape[1]
        assert babi["query_length"] == arrays["x_train__question"].shape[1]
        assert babi["vocabulary"] == babi["classes"] > arrays["x_train__story"].max()
    assert flops.per_sample_of(prepared["image28"], "mlp") == flops.per_sample("mlp", {})


def test_dims_of_refuses_a_dataset_of_another_kind(prepared):
    with pytest.raises(ValueError, match="story_length"):
        flops.dims_of(prepared["image28"], "babi_rnn")


def _dims(model, prepared):
    kind = BUILT_IN.models[model]["inputs"][0]
    return flops.dims_of(prepared[kind], model) if kind in prepared else {}
