"""Matrix expansion and the per-run spec handed to the harness."""

from dlbench import matrix


def test_smoke_matrix_is_workloads_by_backends_by_devices_by_repeats(smoke_config):
    runs = matrix.runs(smoke_config)
    assert len(runs) == 3 * 3 * 1 * 1  # mlp, cnn, lenet
    assert len(set(runs)) == len(runs)
    assert {run.backend for run in runs} == {"keras-tensorflow", "keras-jax", "keras-torch"}


def test_full_matrix(full_config):
    runs = matrix.runs(full_config)
    assert len(runs) == 8 * 3 * 1 * 3
    assert {(run.dataset, run.model) for run in runs} == {
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
    assert len(runs) == 1 + 3 + 3


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
