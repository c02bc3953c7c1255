"""Shared initial weights (dlbench.models.initial_weights): numpy draws as Keras'
initialisers define them, Keras' axes converted to channels-first
frameworks, and what a run records when it loads them or cannot. (The
conversion against real frameworks: test_workflow_e2e, where native torch
and Keras start from one file.)"""

import math
import os

import numpy as np
import pytest

from dlbench.models import initial_weights
from dlbench.record.run_spec import RunSpec
from dlbench.run import integrity, shared_weights
from dlbench.run.backends import base

GLOROT = {"kind": "variance_scaling", "scale": 1.0, "mode": "fan_avg", "distribution": "uniform"}


def rng(seed=0):
    return np.random.RandomState(seed)


def test_fans_are_keras_compute_fans():
    assert initial_weights.fans((784, 512)) == (784, 512)
    assert initial_weights.fans((3, 3, 32, 64)) == (9 * 32, 9 * 64)
    assert initial_weights.fans((10,)) == (10, 10)


def test_glorot_uniform_draws_within_its_limit_with_its_spread():
    values = initial_weights.draw(GLOROT, (400, 300), rng())
    limit = math.sqrt(6.0 / (400 + 300))
    assert values.dtype == np.float32 and values.shape == (400, 300)
    assert np.abs(values).max() <= limit
    assert values.std() == pytest.approx(limit / math.sqrt(3), rel=0.02)
    assert (values == initial_weights.draw(GLOROT, (400, 300), rng())).all()  # seeded
    assert (values != initial_weights.draw(GLOROT, (400, 300), rng(1))).any()


def test_he_normal_is_truncated_at_two_deviations():
    he = {
        "kind": "variance_scaling",
        "scale": 2.0,
        "mode": "fan_in",
        "distribution": "truncated_normal",
    }
    values = initial_weights.draw(he, (3, 3, 16, 32), rng())
    stddev = math.sqrt(2.0 / (9 * 16)) / initial_weights.TRUNCATED_NORMAL_STDDEV
    assert np.abs(values).max() <= 2 * stddev + 1e-7
    assert values.std() == pytest.approx(math.sqrt(2.0 / (9 * 16)), rel=0.05)


def test_orthogonal_and_forget_gate_bias():
    recurrent = initial_weights.draw({"kind": "orthogonal", "gain": 1.0}, (100, 400), rng())
    assert np.allclose(recurrent @ recurrent.T, np.eye(100), atol=1e-5)  # rows orthonormal
    bias = initial_weights.draw(
        {"kind": "forget_gate_bias", "inner": {"kind": "constant", "value": 0.0}}, (400,), rng()
    )
    assert (bias[100:200] == 1).all() and (bias[:100] == 0).all() and (bias[200:] == 0).all()
    embeddings = initial_weights.draw(
        {"kind": "uniform", "minval": -0.05, "maxval": 0.05}, (50, 8), rng()
    )
    assert np.abs(embeddings).max() <= 0.05
    with pytest.raises(ValueError, match="no numpy draw"):
        initial_weights.draw({"kind": "lecun_magic"}, (2,), rng())


def test_a_dense_layer_fed_by_a_flattened_map_takes_channels_first_rows():
    height, width, channels, units = 2, 3, 4, 5
    rows = np.arange(height * width * channels, dtype="float32")
    kernel = np.repeat(rows[:, None], units, axis=1)  # each row holds its Keras index
    converted = initial_weights.dense_out_in(kernel, [height, width, channels])
    assert converted.shape == (units, height * width * channels)
    for c in range(channels):
        for h in range(height):
            for w in range(width):
                torch_index = c * height * width + h * width + w
                keras_index = h * width * channels + w * channels + c
                assert converted[0, torch_index] == keras_index
    assert (initial_weights.dense_out_in(kernel) == kernel.T).all()


def test_gate_blocks_and_convolution_layout():
    z, r, h = (np.full((2, 3), value) for value in (0.0, 1.0, 2.0))
    keras_gru = np.concatenate([z, r, h], axis=1)
    torch_gru = initial_weights.gate_order(keras_gru, (1, 0, 2))
    assert (torch_gru[:, :3] == 1).all() and (torch_gru[:, 3:6] == 0).all()
    kernel = np.zeros((3, 3, 2, 8))
    assert initial_weights.conv_oihw(kernel).shape == (8, 2, 3, 3)


def layout_of(shapes):
    return {
        "format": initial_weights.FORMAT,
        "seed": 42,
        "weights": [
            {"path": "m/{}/{}".format(layer, name), "class": cls, "variable": name, "shape": shape}
            for layer, cls, name, shape in shapes
        ],
    }


def test_weights_group_by_layer_and_shapes_are_checked_first():
    layout = layout_of(
        [
            ("lstm/lstm_cell", "LSTMCell", "kernel", [3, 8]),
            ("lstm/lstm_cell", "LSTMCell", "bias", [8]),
            ("lstm_1/lstm_cell", "LSTMCell", "kernel", [2, 8]),
            ("dense", "Dense", "kernel", [2, 1]),
        ]
    )
    weights = [np.zeros(e["shape"], "float32") for e in layout["weights"]]
    groups = initial_weights.by_layer(layout, weights)
    assert [(cls, sorted(arrays)) for cls, arrays, _ in groups] == [
        ("LSTMCell", ["bias", "kernel"]),
        ("LSTMCell", ["kernel"]),  # same layer name, another path: another layer
        ("Dense", ["kernel"]),
    ]
    initial_weights.check_shapes([w.shape for w in weights], layout)
    with pytest.raises(
        ValueError, match="weight 2 .* shape \\(3, 8\\) is not the file's \\(2, 8\\)"
    ):
        initial_weights.check_shapes([(3, 8), (8,), (3, 8), (2, 1)], layout)
    with pytest.raises(ValueError, match="has 3 weights, the shared file 4"):
        initial_weights.check_shapes([(3, 8), (8,), (2, 8)], layout)


class Loads(object):
    def __init__(self, error=None):
        self.error = error
        self.loaded = None

    def load_initial_weights(self, model, layout, weights):
        if self.error:
            raise self.error
        self.loaded = weights


def test_a_run_records_what_it_started_from(tmp_path):
    layout = layout_of([("dense", "Dense", "kernel", [2, 1])])
    path = str(tmp_path / "seed42.npz")
    shared_weights.write(path, layout, [np.ones((2, 1), "float32")])
    assert os.path.exists(integrity.seal_path(path))  # sealed like the prepared data
    digest = initial_weights.sha256_of(path)
    spec = RunSpec("digits", "mlp", "native-x", 42, {}, initial_weights=path)

    adapter = Loads()
    assert shared_weights.load_initial_weights(spec, adapter, None) == {
        "loaded": True,
        "file": path,
        "sha256": digest,
    }
    assert (adapter.loaded[0] == 1).all()
    failed = shared_weights.load_initial_weights(spec, Loads(ValueError("no conversion")), None)
    assert failed["loaded"] is False and failed["reason"].endswith("ValueError: no conversion")
    unable = shared_weights.load_initial_weights(spec, base.Adapter("numpy", {}), None)
    assert unable["reason"] == "native-x cannot load shared weights yet"
    without = spec._replace(initial_weights=None)
    assert shared_weights.load_initial_weights(without, adapter, None) is None


def test_the_file_keeps_the_layout_under_its_name_and_a_format_1_file_is_named(tmp_path):
    """The layout is the file's ``layout``; a file of format 1 (its layout
    under ``manifest``, before the workflow drew it again) is refused by
    name, never read as weights without a layout."""
    layout = layout_of([("dense", "Dense", "kernel", [2, 1])])
    path = str(tmp_path / "seed42.npz")
    shared_weights.write(path, layout, [np.ones((2, 1), "float32")])
    with np.load(path) as arrays:
        assert sorted(arrays.files) == ["layout", "w0000"]
    found, weights = shared_weights.read(path)
    assert found == layout and found["format"] == initial_weights.FORMAT == 2
    assert [w.shape for w in weights] == [(2, 1)]
    older = str(tmp_path / "format1.npz")
    np.savez(older, manifest=np.array('{"weights": []}'), w0000=np.ones((2, 1), "float32"))
    with pytest.raises(ValueError, match="format1.npz: shared weights of format 1"):
        shared_weights.read(older)
