"""An op slipped into one backend's step shows in its gap: native torch's
digits MLP run twice by the harness in its environment, as it is and with
an elementwise loop added to every activation (200 multiplications by one,
the kind of op a port slips in), each with its op profile; the op tables
(dlbench.analysis.op_profiles) must put the slipped run behind the other,
its extra time in elementwise ops, and name the multiplication first among
the ops it adds, with its calls per step. Every backend's op profile on the
tests' workflow: test_workflow_e2e.py."""

import json

from dlbench.analysis import op_categories, op_profiles
from dlbench.plan import matrix, run_spec
from workflows import harness_with, load_test_config

CONFIG = matrix.normalise(load_test_config())
LOOP = 200
SLIPPED = (
    "import torch.nn.functional as functional\n"
    "relu = functional.relu\n"
    "def relu_with_a_loop(x, *args, **kwargs):\n"
    "    for _ in range({}):\n"
    "        x = x * 1.0\n"
    "    return relu(x, *args, **kwargs)\n"
    "functional.relu = relu_with_a_loop\n"
).format(LOOP)


def test_a_slipped_elementwise_loop_shows_in_that_backends_gap(built_workflow, tmp_path):
    (run,) = [
        run
        for run in matrix.runs(CONFIG)
        if (run.model, run.backend, run.compile, run.repeat) == ("mlp", "native-torch", "eager", 1)
    ]
    spec = run_spec.spec(CONFIG, run).as_json()
    assert spec["op_profile"]
    (weights,) = built_workflow.build(spec["initial_weights"])
    (data,) = built_workflow.build("results/data/digits.npz")
    spec["initial_weights"] = str(weights)
    runs = []
    for name, first in (("as-it-is", ""), ("slipped", SLIPPED)):
        ops = tmp_path / (name + ".ops.json")
        record = harness_with(
            built_workflow,
            "native-torch",
            spec,
            data,
            tmp_path / (name + ".json"),
            tmp_path / (name + ".csv"),
            first,
            ops,
        )
        record = dict(record, backend=name)
        runs.append((record, json.loads(ops.read_text()), record))
    found, per_step = op_profiles.table(runs)
    print(found.to_string())
    assert found["reason"].isna().all()
    (gap,) = op_profiles.gaps(found, per_step).to_dict("records")
    print(gap)
    assert (gap["backend"], gap["fastest"]) == ("slipped", "as-it-is")
    grown = {key: gap[key + "_extra_ms"] for key in op_categories.CATEGORY_KEYS}
    assert max(grown, key=grown.get) == op_categories.ELEMENTWISE
    first_added = gap["ops_that_add_most"].split("; ")[0]
    assert first_added.startswith("aten::mul ×"), gap["ops_that_add_most"]
    calls = float(first_added.split("×")[1].split("/")[0])
    assert calls >= 2 * LOOP  # two activations a step, each with its loop
