"""Matrix expansion and the per-run spec handed to the harness."""

import pytest

from dlbench import matrix

KERAS3 = {"keras-tensorflow", "keras-jax", "keras-torch"}
LEGACY = {"keras2-theano", "keras2-cntk", "keras-mxnet"}


def test_smoke_matrix_is_workloads_by_backends_by_devices_by_repeats(smoke_config):
    runs = matrix.runs(smoke_config)
    # mlp, cnn on Keras 3 and the seed systems; lenet on those and OpenVINO;
    # cifar_cnn, imdb_gru, babi_rnn on Keras 3; resnet50 on Keras 3 and OpenVINO
    assert len(runs) == 2 * 6 + 7 + 3 * 3 + 4
    assert len(set(runs)) == len(runs)
    assert {run.backend for run in runs if run.model == "mlp"} == KERAS3 | LEGACY
    assert {run.backend for run in runs if run.model == "lenet"} == (
        KERAS3 | LEGACY | {"keras-openvino"}
    )


def test_inference_only_backend_cells_are_not_applicable_not_run(smoke_config):
    cells = matrix.not_applicable_cells(smoke_config)
    assert {c["backend"] for c in cells} == {"keras-openvino"}
    assert {c["model"] for c in cells} == {"mlp", "cnn", "cifar_cnn", "imdb_gru", "babi_rnn"}
    assert {c["reason"] for c in cells} == {"n/a (inference only)"}


def test_workload_no_backend_can_run_is_refused(smoke_config):
    smoke_config["workloads"][0]["backends"] = ["keras-openvino"]
    with pytest.raises(matrix.ConfigError, match=r"workloads\[0\].backends: no backend"):
        matrix.check(smoke_config)


def test_full_matrix(full_config):
    runs = matrix.runs(full_config)
    # 7 training workloads on 6 backends, 2 inference workloads on 7 (OpenVINO);
    # native-torch: mlp, cnn and lenet
    assert len(runs) == (7 * 6 + 2 * 7 + 3) * 1 * 3
    assert {(run.dataset, run.model) for run in runs} == {
        ("babi", "babi_rnn"),
        ("mnist", "mlp"),
        ("mnist", "cnn"),
        ("mnist", "hrnn"),
        ("mnist", "lenet"),
        ("cifar10", "cifar_cnn"),
        ("cifar10", "vgg_cifar"),
        ("imagenet_synthetic", "resnet50"),
        ("imdb", "imdb_gru"),
    }


def test_workload_may_restrict_backends(smoke_config):
    smoke_config["workloads"][0]["backends"] = ["keras-jax"]
    runs = matrix.runs(smoke_config)
    assert {run.backend for run in runs if run.model == "mlp"} == {"keras-jax"}
    assert len(runs) == 1 + 6 + 7 + 3 * 3 + 4


def test_run_dir_layout():
    run = matrix.Run("mnist", "mlp", "keras-jax", 0, 2)
    assert matrix.run_dir(run) == "results/runs/mnist/mlp/keras-jax/0/rep2"


def test_spec_carries_the_hyper_parameters_and_a_seed_per_repeat(smoke_config):
    first = matrix.spec(smoke_config, matrix.Run("digits", "mlp", "keras-jax", 0, 1))
    second = matrix.spec(smoke_config, matrix.Run("digits", "mlp", "keras-torch", 0, 2))
    assert first["hyper"] == {
        "batch_size": 128,
        "epochs": 4,
        "loss": "categorical_crossentropy",
        "optimizer": {
            "name": "rmsprop",
            "learning_rate": 0.001,
            "rho": 0.9,
            "epsilon": 1e-7,
            "momentum": 0.0,
            "centered": False,
        },
    }
    assert first["seed"] == 42 and second["seed"] == 43
    assert first["backend_settings"] == {"jit_compile": True}


def test_spec_of_one_workload_ignores_the_others(smoke_config):
    run = matrix.Run("digits", "mlp", "keras-jax", 0, 1)
    before = matrix.spec(smoke_config, run)
    smoke_config["workloads"][1]["epochs"] = 99
    assert matrix.spec(smoke_config, run) == before
