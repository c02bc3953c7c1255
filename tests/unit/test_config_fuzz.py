"""Bad configs, generated: whatever is wrong, the answer is an error that
names the key, in at most three lines, from the schema or the matrix check,
both before any job starts; never another exception from deeper down. A
config that passes both expands into runs and specs without error."""

import copy
import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snakemake.common.configfile import load_configfile

from dlbench.plan import matrix, run_spec, validation
from testkit import REPO

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
SMOKE = (REPO / "config" / "smoke-full.yaml").read_text()

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=300),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=12),
    st.sampled_from(["../../etc/passwd", "/abs/path", "keras-jax", "digits", "mlp", "all"]),
    st.lists(st.integers(min_value=-2, max_value=9), max_size=4),
    st.dictionaries(st.sampled_from(["name", "epochs", "x"]), st.integers(), max_size=2),
)


def load_smoke():
    import yaml

    return yaml.safe_load(SMOKE)


@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    """The config's schema as Snakemake loads it, written out as JSON, which
    its validate reads before it tries YAML: the same schema, without parsing
    the YAML again for each config (pure-Python PyYAML: 0.2 s of the 0.24 s
    that one config took to check)."""
    path = tmp_path_factory.mktemp("schema") / "config.schema.json"
    path.write_text(json.dumps(load_configfile(SCHEMA)))
    return str(path)


def check_before_any_job(config, schema):
    """What the workflow does with a config before it plans a job
    (workflow/rules/common.smk), as on this kind of machine with a GPU."""
    validation.validate_config(
        config,
        json.loads(open(schema).read()),
        schema,
        machine=lambda config: (2, 1),
        log_path=os.devnull,  # the workflow names its log: one line more
    )
    for run in matrix.runs(config):
        run_spec.spec(config, run)


@st.composite
def mutations(draw):
    """(config, key, where) — a value replaced, a key added or removed, at
    the top level or in a workload (``where``: the workload's index as the
    error would write it)."""
    config = load_smoke()
    where = draw(st.sampled_from(["top", "workload"]))
    if where == "top":
        target, name = config, None
    else:
        index = draw(st.integers(min_value=0, max_value=len(config["workloads"]) - 1))
        target, name = config["workloads"][index], "[{}]".format(index)
    action = draw(st.sampled_from(["replace", "add", "remove"]))
    if action == "add":
        key = draw(st.sampled_from(["zz_unknown", "Repeats", "epoch", "../x"]))
    else:
        key = draw(st.sampled_from(sorted(target)))
    if action == "remove":
        del target[key]
    else:
        target[key] = draw(VALUES)
    return config, key, name


def test_a_mutated_config_passes_or_is_refused_naming_the_key(schema):
    """Then, for the record (pytest -s shows it), the longest refusal the
    mutations met; a fuzz that met none tested no refusal."""
    longest = {"refusals": 0, "lines": 0, "characters": 0, "message": ""}

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(mutations())
    def passes_or_is_refused_naming_the_key(mutation):
        config, key, parent = mutation
        try:
            check_before_any_job(copy.deepcopy(config), schema)
        except matrix.ConfigError as error:
            message = str(error)
            # the key itself, or the workload it is in (removing `task` makes a
            # training workload, whose missing epochs the error then names)
            assert key in message or (parent and parent in message), (key, parent, message[-800:])
            assert len(message.splitlines()) <= 3, message
            longest["refusals"] += 1
            if len(message.splitlines()) >= longest["lines"]:
                longest.update(lines=len(message.splitlines()), message=message)
            longest["characters"] = max(longest["characters"], len(message))

    passes_or_is_refused_naming_the_key()
    print(
        "{refusals} refusals; the longest: {lines} lines, {characters} characters:".format(
            **longest
        )
    )
    print(longest["message"])
    assert longest["refusals"] >= 30, longest  # a tenth of the mutations, at the least


SOURCE_PIECES = st.sampled_from(
    [
        "import keras\n",
        "def build(keras, spec):\n    return keras\n",
        "def build(model):\n    pass\n",
        "def build(keras, spec, depth):\n    pass\n",
        "def build(*parts, **named):\n    pass\n",
        "def build(keras, spec, *, width):\n    pass\n",
        "build = make()\n",
        "class build:\n    pass\n",
        "def other(keras, spec):\n    pass\n",
        "x = (\n",
        "\tif True:\n  pass\n",
        "\x00",
        "é = 1\n",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(SOURCE_PIECES, max_size=4))
def test_a_model_file_of_any_content_is_answered_by_name(tmp_path_factory, pieces):
    """Whatever a model file holds, its check at planning answers with None
    or a message that names the key; it never raises, and never runs the file."""
    from dlbench.models import workloads

    path = tmp_path_factory.mktemp("model") / "mine.py"
    path.write_text("".join(pieces))
    problem = workloads.CustomWorkload("mine", str(path)).source_problem()
    assert problem is None or problem.startswith(
        ("custom_models.mine.file: ", "custom_models.mine.builder: ")
    )
    if problem is None:
        assert "def build(" in "".join(pieces) or "build = " in "".join(pieces)
