"""Models of the user's own (config ``custom_models``): registered beside the
built-in workloads, Keras backends only, their file in the spec and the
record, their lines counted; synthetic datasets of a shape the config gives.
The runs themselves: test_workflow_e2e (the example on the smoke) and
test_custom_model_e2e (a model outside the repo, Keras 2 included)."""

import copy
import hashlib
import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from dlbench import catalog
from dlbench.data import preparation
from dlbench.models import lines, workloads
from dlbench.plan import config_rules, matrix, run_spec
from dlbench.record import record_schema
from dlbench.registry import BUILT_IN, Registry
from testkit import REPO, fixture_record

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
MODEL = textwrap.dedent(
    '''
    """A dense classifier."""


    def helper(layers, units):
        return layers.Dense(units, activation="relu")


    def make(keras, spec):
        layers = keras.layers
        # a comment: not code
        return keras.Sequential(
            [keras.Input(shape=tuple(spec["input_shape"])), layers.Flatten(), helper(layers, 8),
             layers.Dense(spec["classes"], activation="softmax")]
        )
    '''
)


@pytest.fixture
def own_model(tmp_path, monkeypatch):
    """A model file in a working directory of its own, named as a config would."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(str(REPO / "examples"), str(tmp_path / "examples"))  # the smoke's own model
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "dense.py").write_text(MODEL)
    return {"file": "models/dense.py", "builder": "make", "inputs": ["image28"]}


def config_with(smoke_config, entry, dataset="digits", backends=None):
    config = copy.deepcopy(smoke_config)
    config["custom_models"]["own_dense"] = entry
    workload = dict(config["workloads"][0], dataset=dataset, model="own_dense", repeats=1)
    if backends:
        workload["backends"] = backends
    config["workloads"].append(workload)
    validate(config, SCHEMA)
    return config


def test_a_model_of_your_own_joins_the_registry_for_keras_only(own_model):
    registry = Registry({"own_dense": own_model})
    assert "own_dense" in registry.models and "own_dense" not in workloads.built_in()
    assert "own_dense" not in BUILT_IN.models  # the built-in registry is left as it was
    assert registry.families("own_dense") == ["keras"]
    assert registry.models["own_dense"] == {"inputs": ("image28",), "parameters": None}
    assert registry.parameter_count("own_dense", {"classes": 10}) is None  # the built model's
    assert registry.not_applicable("keras-jax", "train", model="own_dense") is None
    assert registry.not_applicable("native-torch", "train", model="own_dense") == (
        "n/a (own_dense is a Keras model of your own, from models/dense.py: it runs on Keras "
        "backends only)"
    )
    built = registry.builder("own_dense", "keras")
    assert built.__name__ == "make" and registry.source("own_dense", "keras") == "models/dense.py"
    assert "own_dense" in registry.models_of("keras-torch")
    assert "own_dense" not in registry.models_of("native-torch")


def test_the_registry_cannot_be_changed(own_model):
    registry = Registry({"own_dense": own_model})
    with pytest.raises(TypeError):
        registry.models["other"] = {"inputs": ("image28",), "parameters": None}
    with pytest.raises(TypeError):
        registry.datasets["other"] = {}
    with pytest.raises(TypeError):
        catalog.BACKENDS["other"] = {}
    with pytest.raises(TypeError):
        catalog.DATASETS["other"] = {}


def test_inputs_left_out_fit_every_dataset(own_model):
    registry = Registry({"own_dense": {"file": own_model["file"]}})
    assert set(registry.models["own_dense"]["inputs"]) == set(catalog.INPUT_SHAPES)
    assert registry.entry_point("own_dense") == "build"
    assert all(registry.fits("own_dense", dataset) for dataset in registry.datasets)


def test_a_missing_file_or_builder_says_which(own_model):
    registry = Registry({"own_dense": dict(own_model, file="models/nothing.py")})
    with pytest.raises(FileNotFoundError, match="custom_models.own_dense.file: no file"):
        registry.builder("own_dense", "keras")
    registry = Registry({"own_dense": dict(own_model, builder="model")})
    with pytest.raises(AttributeError, match="models/dense.py has no function 'model'"):
        registry.builder("own_dense", "keras")


@pytest.mark.parametrize(
    "source, builder, message",
    [
        (
            "import keras\n\ndef make(keras, spec):\n    return keras.Sequential([\n",
            "make",
            "custom_models.own_dense.file: models/dense.py, line 4: '[' was never closed; "
            "fix the file",
        ),
        (
            "def helper(layers):\n    pass\n\ndef build(keras, spec):\n    pass\n",
            "make",
            "custom_models.own_dense.builder: models/dense.py defines no function 'make' at its "
            "top level (its functions: helper, build); name the function that returns the model",
        ),
        (
            "X = 1\n\n\ndef make(model, spec, depth):\n    pass\n",
            "make",
            "custom_models.own_dense.builder: models/dense.py, line 4: make(model, spec, depth) "
            "cannot be called as make(keras, spec); define it with those two arguments",
        ),
    ],
    ids=["syntax", "no builder", "signature"],
)
def test_a_broken_model_file_is_refused_at_planning_with_its_line(
    own_model, smoke_config, source, builder, message
):
    (Path("models") / "dense.py").write_text(source)
    config = config_with(smoke_config, dict(own_model, builder=builder))
    with pytest.raises(matrix.ConfigError) as refused:
        config_rules.validate(config)
    assert str(refused.value) == message


def test_a_model_file_is_checked_without_running_it(own_model, smoke_config):
    """Its top-level ``import keras`` (every Keras example has one) is never
    executed at planning, where no framework is installed; defaults and
    *args are callable as (keras, spec)."""
    for signature in ("keras, spec", "keras, spec, width=8", "*parts", "keras, spec=None"):
        source = "import keras\nimport not_installed_here\n\ndef make({}):\n    pass\n"
        (Path("models") / "dense.py").write_text(source.format(signature))
        config_rules.validate(config_with(smoke_config, own_model))
    (Path("models") / "dense.py").unlink()
    with pytest.raises(matrix.ConfigError, match="custom_models.own_dense.file: no file .*dense"):
        config_rules.validate(config_with(smoke_config, own_model))


def test_config_check_runs_it_on_keras_backends_and_refuses_what_cannot_run(
    own_model, smoke_config
):
    config = config_with(smoke_config, own_model, backends=["keras-jax", "native-torch"])
    config_rules.validate(config)
    runs = [run for run in matrix.runs(config) if run.model == "own_dense"]
    assert [run.backend for run in runs] == ["keras-jax"]
    (cell,) = [c for c in matrix.not_applicable_cells(config) if c["model"] == "own_dense"]
    assert cell["backend"] == "native-torch" and "of your own" in cell["reason"]

    with pytest.raises(matrix.ConfigError, match="does not fit dataset 'imdb_tiny'"):
        config_rules.validate(config_with(smoke_config, own_model, dataset="imdb_tiny"))
    natives_only = config_with(smoke_config, own_model, backends=["native-torch"])
    with pytest.raises(matrix.ConfigError, match="Keras backends only"):
        config_rules.validate(natives_only)
    clash = copy.deepcopy(config)
    clash["custom_models"]["mlp"] = own_model
    with pytest.raises(matrix.ConfigError, match="a built-in workload has that name"):
        config_rules.validate(clash)


def test_bad_entries_are_refused_by_the_schema(own_model, smoke_config):
    for bad in ({"builder": "make"}, dict(own_model, builder="a-b"), dict(own_model, inputs=["x"])):
        config = copy.deepcopy(smoke_config)
        config["custom_models"]["own_dense"] = bad
        with pytest.raises(WorkflowError):
            validate(config, SCHEMA)


def test_the_spec_and_record_carry_the_file_and_its_digest(own_model, smoke_config, tmp_path):
    config = config_with(smoke_config, own_model)
    config_rules.validate(config)
    run = matrix.Run("digits", "own_dense", "keras-torch", devices=0, repeat=1, machine="m")
    spec = run_spec.spec(config, run)
    digest = hashlib.sha256(MODEL.encode()).hexdigest()
    assert spec.custom_model == dict(own_model, sha256=digest)
    (tmp_path / "models" / "dense.py").write_text(MODEL.replace("8)", "16)"))
    edited = run_spec.spec(config, run)
    assert edited.custom_model["sha256"] != digest  # an edit re-runs its cells
    assert edited._replace(custom_model=None) == spec._replace(custom_model=None)
    mlp = run_spec.spec(config, matrix.Run("digits", "mlp", "keras-torch", devices=0, repeat=1))
    assert mlp.custom_model is None and "custom_model" not in mlp.as_json()
    record = fixture_record("train_ok", model="own_dense", custom_model=spec.custom_model)
    assert record_schema.problems(record) == []
    record["custom_model"] = dict(spec.custom_model, sha256="edited")
    assert record_schema.problems(record)


def test_its_lines_are_the_builder_and_what_it_reaches(own_model):
    registry = Registry({"own_dense": own_model})
    counted = lines.count("keras-torch", "own_dense", "train", registry)
    # make: def + layers + return ... (4 lines of the call) = 6; helper: 2
    assert counted["model_lines"] == 8
    # the same Keras program trains every Keras model
    mlp = lines.count("keras-torch", "mlp", "train", BUILT_IN)
    assert counted["program_lines"] == mlp["program_lines"]


SYNTHETIC = {
    "pixels": {"input_shape": [6, 5, 3], "classes": 4, "train": 40, "test": 8},
    "tokens": {"input_shape": [12], "classes": 3, "vocabulary": 50},
}


@pytest.fixture
def synthetic():
    return copy.deepcopy(SYNTHETIC)


def test_synthetic_datasets_are_random_inputs_of_the_given_shape(synthetic, tmp_path):
    registry = Registry(synthetic_datasets=synthetic)
    assert registry.speed_only("pixels") and not registry.speed_only("digits")
    assert registry.input_shape_of("pixels") == (6, 5, 3)
    assert "pixels" not in BUILT_IN.datasets
    preparation.prepare("pixels", {}, tmp_path / "pixels.npz", registry.datasets["pixels"])
    preparation.prepare("tokens", {}, tmp_path / "tokens.npz", registry.datasets["tokens"])
    with np.load(tmp_path / "pixels.npz") as arrays:
        assert arrays["x_train"].shape == (40, 6, 5, 3) and arrays["x_test"].shape == (8, 6, 5, 3)
        assert arrays["x_train"].dtype == np.float32
        assert 0 <= arrays["x_train"].min() and arrays["x_train"].max() < 1
        assert set(arrays["y_train"]) <= set(range(4))
        assert json.loads(str(arrays["meta"])) == {"classes": 4}
    with np.load(tmp_path / "tokens.npz") as arrays:
        assert arrays["x_train"].shape == (512, 12) and arrays["x_test"].shape == (128, 12)
        assert arrays["x_train"].dtype == np.int32
        assert 1 <= arrays["x_train"].min() and arrays["x_train"].max() < 50
        assert json.loads(str(arrays["meta"])) == {"classes": 3, "vocabulary": 50}
    preparation.prepare("tokens", {}, tmp_path / "again.npz", registry.datasets["tokens"])
    with np.load(tmp_path / "tokens.npz") as one, np.load(tmp_path / "again.npz") as two:
        assert (one["x_train"] == two["x_train"]).all()  # the same data for every backend


def test_synthetic_datasets_take_models_of_your_own_only(synthetic, own_model, smoke_config):
    entry = {"file": own_model["file"], "builder": own_model["builder"]}  # inputs left out
    config = config_with(smoke_config, entry, dataset="pixels")
    config["synthetic_datasets"] = synthetic
    validate(config, SCHEMA)
    config_rules.validate(config)
    own = [run for run in matrix.runs(config) if run.model == "own_dense"]
    assert {run.dataset for run in own} == {"pixels"}
    assert sorted(run.backend for run in own) == sorted(
        backend
        for backend, entry in catalog.BACKENDS.items()
        if entry["family"] == "keras" and "train" in entry["tasks"]
    )
    builtin = copy.deepcopy(config)
    builtin["workloads"][-1]["model"] = "mlp"
    builtin["workloads"][-1]["dataset"] = "tokens"
    with pytest.raises(matrix.ConfigError, match="model 'mlp' does not fit dataset 'tokens'"):
        config_rules.validate(builtin)
    unknown = copy.deepcopy(config)
    unknown["workloads"][-1]["dataset"] = "imagenet"
    with pytest.raises(matrix.ConfigError, match="'imagenet' is not one of the datasets"):
        config_rules.validate(unknown)
    clash = copy.deepcopy(config)
    clash["synthetic_datasets"] = {"digits": SYNTHETIC["pixels"]}
    with pytest.raises(matrix.ConfigError, match="a built-in dataset has that name"):
        config_rules.validate(clash)


def test_a_failed_model_check_is_the_reason_its_cells_are_invalid(tmp_path):
    from dlbench.run import model_check

    passed, failed = tmp_path / "passed.json", tmp_path / "failed.json"
    passed.write_text(json.dumps({"ok": True, "reason": None}))
    reason = "m.py, line 3: build(keras, spec) raised"
    failed.write_text(json.dumps({"ok": False, "reason": reason}))
    assert model_check.verdict(str(passed)) is None
    assert model_check.verdict(str(failed)) == (
        "the model of your own failed its check: m.py, line 3: build(keras, spec) raised"
    )
    invalid = fixture_record("train_ok", status="invalid", reason="the model of your own ...")
    assert record_schema.problems(invalid) == []


def test_a_model_that_failed_its_check_is_not_built_to_count_its_flops(tmp_path):
    """As its runs, the model is never built: no keras-torch is needed (this
    interpreter has no torch), and the count says why it is missing."""
    from dlbench.run import flops_count

    failed = tmp_path / "check.json"
    failed.write_text(json.dumps({"ok": False, "reason": "3 outputs for 10 classes"}))
    output = tmp_path / "flops.json"
    command = ["--model", "own_broken", "--model-check", str(failed)]
    assert flops_count.main(command + ["--data", "d.npz", "--output", str(output)]) == 0
    counted = json.loads(output.read_text())
    assert counted["forward"] is None and counted["training"] is None
    assert counted["error"] == "the model of your own failed its check: 3 outputs for 10 classes"
