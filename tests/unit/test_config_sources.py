"""How config files and ``--config`` combine (config/README.md, "How configs
combine"): a named config file replaces config/config.yaml, a ``--config`` key
replaces that key whole, a command-line value is read as YAML where its key
takes no string; and a refused config prints its reason alone."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dlbench.plan import config_sources, matrix, validation
from testkit import REPO, copy_workflow

SCHEMA = validation.load_schema(REPO / "workflow" / "schemas" / "config.schema.yaml")
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
FILE = {
    "backends": {"keras-tensorflow": {"jit_compile": True}, "keras-jax": None},
    "equivalence_check": {"steps": 4, "tolerance": 2.0e-4},
    "repeats": 3,
}


def test_a_command_line_mapping_replaces_the_files_mapping_whole():
    combined = config_sources.combine(
        [FILE], {"backends": {"keras-torch": {}}, "equivalence_check": {"steps": "0"}}, SCHEMA
    )
    assert combined["backends"] == {"keras-torch": {}}
    assert combined["equivalence_check"] == {"steps": 0}
    assert combined["repeats"] == 3
    assert FILE["backends"]["keras-tensorflow"] == {"jit_compile": True}  # not changed in place


def test_several_config_files_merge_in_order_as_snakemake_merges_them():
    later = {"backends": {"keras-jax": {"jit_compile": False}}, "repeats": 1}
    combined = config_sources.combine([FILE, later], {}, SCHEMA)
    assert combined["backends"] == {
        "keras-tensorflow": {"jit_compile": True},
        "keras-jax": {"jit_compile": False},
    }
    assert combined["repeats"] == 1


@pytest.mark.parametrize(
    "given, expected",
    [
        # Snakemake reads a top-level false, and every nested value, as a string
        ({"op_profile": "false"}, {"op_profile": False}),
        ({"generated_data": "true"}, {"generated_data": True}),
        ({"backends": {"keras-jax": "null"}}, {"backends": {"keras-jax": None}}),
        ({"backends": {"keras-jax": "None"}}, {"backends": {"keras-jax": None}}),
        ({"devices": ["0", "1"]}, {"devices": [0, 1]}),
        ({"threads": ["1", "all"]}, {"threads": [1, "all"]}),
        ({"equivalence_check": {"tolerance": "1e-07"}}, {"equivalence_check": {"tolerance": 1e-7}}),
        # where the key takes a string, the string stays
        ({"machine": "123"}, {"machine": "123"}),
        ({"op_profile": ["digits/mlp"]}, {"op_profile": ["digits/mlp"]}),
        (
            {"versions": {"keras-jax": [{"jax": "0.10", "keras": "3.10"}]}},
            {"versions": {"keras-jax": [{"jax": "0.10", "keras": "3.10"}]}},
        ),
    ],
)
def test_a_command_line_value_is_read_as_yaml_where_its_key_takes_no_string(given, expected):
    assert config_sources.combine([{}], given, SCHEMA) == expected


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("sources") / "workflow")


def dry_run(workdir, *arguments):
    return subprocess.run(
        [SNAKEMAKE, "-n", "--forceall", *arguments],
        cwd=workdir,
        capture_output=True,
        text=True,
        env=dict(os.environ, CUDA_VISIBLE_DEVICES=""),
    )


def test_snakemake_plans_only_the_backends_the_command_line_names(workdir):
    done = dry_run(
        workdir,
        "--configfile",
        "config/smoke.yaml",
        "--config",
        "backends={keras-jax: {}, keras-torch: null}",
        "op_profile=false",
    )
    assert done.returncode == 0, done.stderr[-3000:]
    planned = set(re.findall(r"/digits/mlp/([a-z0-9-]+)/devices=", done.stdout))
    assert planned == {"keras-jax", "keras-torch"}


def test_a_refused_config_prints_its_reason_alone(workdir):
    done = dry_run(workdir, "--configfile", "config/smoke.yaml", "--config", "repeats=0")
    assert done.returncode == 1
    # Snakemake's line on the workflow's profile is all it adds (docs/troubleshooting.md)
    assert done.stderr.splitlines() == [
        "Using workflow specific profile profiles/default for setting default command line "
        "arguments.",
        "invalid config: repeats: 0 is less than the minimum of 1",
        "(the schema's whole answer: logs/config-error.log)",
    ]
    assert done.stdout == ""


@pytest.mark.parametrize("value", [False, True, ["digits/mlp"]])
def test_a_config_that_still_says_profile_is_refused_naming_op_profile(value):
    """``profile`` (each framework's op profiler) is now ``op_profile``: a
    config that still says ``profile``, in a file or on the command line, is
    refused before the schema reads it, in one line naming the new key."""
    config = config_sources.combine([dict(FILE, workloads=[])], {"profile": value}, SCHEMA)
    schema_path = REPO / "workflow" / "schemas" / "config.schema.yaml"
    with pytest.raises(matrix.ConfigError) as refused:
        validation.validate_config(config, SCHEMA, schema_path, log_path=os.devnull)
    assert str(refused.value) == (
        "profile: this key is now op_profile (each framework's own op profiler over a window "
        "of steady steps); rename it"
    )
