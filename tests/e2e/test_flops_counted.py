"""FLOPs counted by PyTorch's own counter (FlopCounterMode), in the session's
venvs, against dlbench.models.flops' analytic counts: every built-in workload on
native torch, and every Keras workload and the example model of your own as
dlbench.run.flops_count counts them on Keras 3 over torch."""

import json
import os
import subprocess

import numpy as np

from dlbench.models import flops, workloads
from dlbench.registry import BUILT_IN
from testkit import REPO, RUN_TIMEOUT_S

# The prepared dataset each input kind is counted on (the tests' config's).
COUNTED_ON = {
    "image28": "digits",
    "image32": "cifar10_tiny",
    "image224": "imagenet_synthetic",
    "words150": "imdb_tiny",
    "story_question": "babi_tiny",
}


def workload_data(built_workflow, models):
    """{model: the built workflow's prepared data file it is counted on}."""
    found = {
        model: "results/data/{}.npz".format(COUNTED_ON[BUILT_IN.models[model]["inputs"][0]])
        for model in models
    }
    built_workflow.build(*sorted(set(found.values())))
    return {model: built_workflow.path / path for model, path in found.items()}


def in_venv(built_workflow, environment, script, *arguments):
    """``script`` in ``environment``'s venv; the JSON it prints last."""
    python = built_workflow.venv(environment) / "bin" / "python"
    done = subprocess.run(
        [str(python), "-c", script, *arguments],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH="{}:{}".format(REPO / "src", REPO / "tests" / "e2e")),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_torch_counter_agrees_exactly_with_every_workloads_analytic_flops(built_workflow):
    data = workload_data(built_workflow, workloads.built_in())
    dims = {model: flops.dims_of(path, model) for model, path in data.items()}
    counted = in_venv(
        built_workflow,
        "native-torch",
        "import json, sys\n"
        "import flops_check\n"
        "dims = json.loads(sys.argv[1])\n"
        "print(json.dumps({m: flops_check.count(m, d) for m, d in dims.items()}))\n",
        json.dumps(dims),
    )
    for model in workloads.built_in():
        assert counted[model]["counter"].startswith("torch.utils.flop_counter.FlopCounterMode")
        expected = flops.per_sample(model, dims[model])
        found = (counted[model]["forward"], counted[model]["training"])
        assert found == (expected["forward"], expected["training"]), model


# The example model of your own (examples/imdb_transformer.py) by hand, per
# sample: 150 words of width 32, two heads of 16, a feed-forward layer of 64.
WORDS, WIDTH, HEADS, KEY, FEED_FORWARD, CLASSES = 150, 32, 2, 16, 64, 2


def example_flops_by_hand():
    projections = 4 * WORDS * WIDTH * WIDTH  # query, key, value, output
    attention = 2 * HEADS * WORDS * WORDS * KEY  # the scores, and their weighted sum
    feed_forward = 2 * WORDS * WIDTH * FEED_FORWARD
    classifier = WIDTH * CLASSES
    dense = projections + feed_forward + classifier
    forward = dense + attention
    # weight and input gradients of every product (the embeddings, trained,
    # feed the first ones), two per attention product
    backward = 2 * dense + 2 * attention
    return {"forward": 2 * forward, "training": 2 * (forward + backward)}


def test_keras_models_counted_by_torch_agree_with_the_analytic_flops(built_workflow):
    """dlbench.run.flops_count, which counts the models of your own, counts every
    built-in Keras workload exactly as dlbench.models.flops computes it, and the
    example Transformer as computed by hand (attention on torch's CPU kernel
    included)."""
    data = workload_data(built_workflow, workloads.built_in())
    (data["imdb_transformer"],) = built_workflow.build("results/data/imdb_tiny.npz")
    counted = in_venv(
        built_workflow,
        "keras-torch",
        "import json, sys\n"
        "from dlbench.registry import Registry\nfrom dlbench.run import flops_count\n"
        "registry = Registry({'imdb_transformer': {'file': sys.argv[2]}})\n"
        "pairs = json.loads(sys.argv[1])\n"
        "counted = {m: flops_count.count(m, path, registry) for m, path in pairs.items()}\n"
        "print(json.dumps(counted))\n",
        json.dumps({m: str(p) for m, p in data.items()}),
        str(REPO / "examples" / "imdb_transformer.py"),
    )
    for model in workloads.built_in():
        expected = flops.per_sample_of(data[model], model)
        assert (counted[model]["forward"], counted[model]["training"]) == (
            expected["forward"],
            expected["training"],
        ), model
        assert counted[model]["parameters"] == BUILT_IN.parameter_count(
            model, json.loads(str(np.load(data[model])["meta"]))
        ), model
    example = counted["imdb_transformer"]
    assert {k: example[k] for k in ("forward", "training")} == example_flops_by_hand()
