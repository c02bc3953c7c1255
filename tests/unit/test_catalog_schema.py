"""The config schema: valid configs pass; bad ones are refused naming the key."""

import copy

import pytest
import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from dlbench import catalog
from dlbench.plan import config_rules, matrix
from testkit import REPO

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")


def validated(config):
    config = copy.deepcopy(config)
    validate(config, SCHEMA)
    return config


def test_shipped_configs_are_valid(smoke_config, full_config):
    for config in (smoke_config, full_config):
        config_rules.validate(validated(config))


def test_schema_fills_defaults(smoke_config):
    del smoke_config["threads"]
    assert validated(smoke_config)["threads"] == "all"
    assert validated(smoke_config)["env_mode"] == "auto"


def test_schema_names_match_the_catalog():
    with open(SCHEMA) as handle:
        schema = yaml.safe_load(handle)
    workload = schema["properties"]["workloads"]["items"]["properties"]
    assert (
        "enum" not in workload["dataset"]
    )  # the catalog's and the config's: config_rules.validate
    assert "enum" not in workload["model"]  # the registry's folders: config_rules.validate
    assert set(workload["task"]["enum"]) == set(catalog.TASKS)
    assert set(schema["properties"]["backends"]["propertyNames"]["enum"]) == set(catalog.BACKENDS)
    assert set(workload["backends"]["items"]["enum"]) == set(catalog.BACKENDS)
    custom = schema["properties"]["custom_models"]["additionalProperties"]["properties"]
    assert set(custom["inputs"]["items"]["enum"]) == set(catalog.INPUT_SHAPES)


@pytest.mark.parametrize(
    "mutate, key, words",
    [
        (lambda c: c["workloads"][0].update(dataset="ImageNet"), "dataset", "ImageNet"),
        (lambda c: c["backends"].update({"keras-theano9": None}), "keras-theano9", "keras-theano9"),
        (lambda c: c.update(repeats=-1), "repeats", "-1"),
        (lambda c: c.update(repeats="three"), "repeats", "three"),
        (lambda c: c["workloads"][0].update(batch_size=12.5), "batch_size", "12.5"),
        (lambda c: c["workloads"][0].update(epochs=0), "epochs", "0"),
        (lambda c: c.update(workloads=[]), "workloads", "[]"),
        (lambda c: c.update(threads="many"), "threads", "many"),
        (lambda c: c.update(colour="blue"), "colour", "colour"),
        (lambda c: c["workloads"][0]["optimizer"].update(name="lion"), "name", "lion"),
        # THEANO_FLAGS and PYTENSOR_FLAGS are comma-separated
        (lambda c: c["backends"].update({"keras2-theano": {"cxxflags": "-O1,-g"}}), "theano", ","),
    ],
)
def test_bad_values_are_refused_naming_the_key(smoke_config, mutate, key, words):
    mutate(smoke_config)
    with pytest.raises(WorkflowError) as refused:
        validated(smoke_config)
    message = str(refused.value)
    assert key in message and words in message


def test_a_model_that_is_no_workload_is_refused_naming_the_key(smoke_config):
    smoke_config["workloads"][1]["model"] = "transformer"
    with pytest.raises(
        matrix.ConfigError, match=r"workloads\[1\]\.model: 'transformer' is not one"
    ):
        config_rules.validate(validated(smoke_config))


def test_model_that_does_not_fit_the_dataset(smoke_config):
    smoke_config["workloads"][0]["dataset"] = "cifar10"
    with pytest.raises(
        matrix.ConfigError,
        match=r"workloads\[0\]\.model: model 'mlp' does not fit dataset 'cifar10'",
    ):
        config_rules.validate(validated(smoke_config))


def test_duplicate_workload(smoke_config):
    smoke_config["workloads"].append(copy.deepcopy(smoke_config["workloads"][0]))
    index = len(smoke_config["workloads"]) - 1
    with pytest.raises(
        matrix.ConfigError,
        match=r"workloads\[{}\]: workload digits/mlp is already defined at workloads\[0\]".format(
            index
        ),
    ):
        config_rules.validate(smoke_config)


def test_workload_backend_must_be_configured(smoke_config):
    del smoke_config["backends"]["keras-jax"]
    smoke_config["workloads"][0]["backends"] = ["keras-jax"]
    with pytest.raises(matrix.ConfigError, match=r"workloads\[0\]\.backends: 'keras-jax'"):
        config_rules.validate(smoke_config)


def test_a_device_count_that_cannot_split_a_batch_is_refused(smoke_config):
    smoke_config["devices"] = [0, 1, 3]  # digits/mlp's batch of 128 is not divisible by 3
    with pytest.raises(matrix.ConfigError, match=r"devices\[2\]: 3 devices cannot split"):
        config_rules.validate(smoke_config)
    smoke_config["devices"] = [0, 1, 2, 4]
    config_rules.validate(smoke_config)
