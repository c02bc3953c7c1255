"""Build every model a backend implements on its dataset, as a run would,
and report what the tests compare across frameworks: the parameter count
against the workload's, and the shape of a forward pass of two samples;
with ``--weights``, the outputs after loading the shared initial weights
(``<folder>/<model>.npz``, dlbench.models.initial_weights), which must then agree
across frameworks. Runs inside a backend environment (Python 3.6 and
later); prints JSON.

    python tests/e2e/parity_check.py --backend native-torch --data results/data \\
        --models mlp cnn hrnn [--weights results/parity_weights] \\
        [--settings '{"cxxflags": "-O1"}']
"""

import argparse
import json
import os
import traceback

from dlbench.registry import BUILT_IN
from dlbench.run import backends, launch, run_data, shared_weights

# The dataset each model is built on: the smallest prepared data of its input.
DATASETS = {
    "image28": "digits",
    "image32": "cifar10_tiny",
    "image224": "imagenet_synthetic",
    "words150": "imdb_tiny",
    "story_question": "babi_tiny",
}
SAMPLES = 2


def dataset_of(model):
    return DATASETS[BUILT_IN.models[model]["inputs"][0]]


def outputs_of(model, meta):
    """A model's outputs per sample: its class probabilities, or its features."""
    return BUILT_IN.models[model].get("outputs", meta["classes"])


def first_samples(x, count):
    if isinstance(x, dict):
        return {name: values[:count] for name, values in x.items()}
    return x[:count]


def check_model(adapter, model, data, weights_file=None):
    """The model's parameters and output shape as built; with a weights
    file, its outputs from those weights, or why they did not load."""
    found, shared = {}, None
    if weights_file:
        try:
            shared = shared_weights.read(weights_file)
        except Exception as error:  # the build is still reported
            found["weights_error"] = "{}: {}".format(type(error).__name__, error)
    # only weights that were read follow the build (an adapter may skip its draw)
    adapter.weights_follow = shared is not None
    built = adapter.build(model, data["meta"], {"batch_size": SAMPLES})
    if shared is not None:
        try:
            adapter.load_initial_weights(built, *shared)
        except Exception as error:  # the adapter drew its own: the build is still reported
            found["weights_error"] = "{}: {}".format(type(error).__name__, error)
    outputs = adapter.predict(built, first_samples(data["x_test"], SAMPLES))
    if weights_file and "weights_error" not in found:
        found["outputs"] = [[float(value) for value in row] for row in outputs]
    return dict(
        found,
        parameters=int(adapter.parameter_count(built)),
        expected_parameters=BUILT_IN.parameter_count(model, data["meta"]),
        output_shape=[int(n) for n in getattr(outputs, "shape", ())],
        expected_output_shape=[SAMPLES, outputs_of(model, data["meta"])],
    )


def check(backend, models, data_folder, weights_folder=None, settings=None):
    adapter = backends.adapter_for(backend, settings or {})
    adapter.setup(
        threads=1,
        seed=0,
        devices=0,
        parallel=launch.one_process_on_the_cpu(),
    )
    found = {}
    loaded = {}
    for model in models:
        dataset = dataset_of(model)
        try:
            if dataset not in loaded:
                path = os.path.join(data_folder, dataset + ".npz")
                loaded[dataset] = run_data.load_dataset(path)
            weights_file = os.path.join(weights_folder or "", model + ".npz")
            if not (weights_folder and os.path.exists(weights_file)):
                weights_file = None
            found[model] = check_model(adapter, model, loaded[dataset], weights_file)
        except Exception as error:  # the report says which model failed and how
            found[model] = {"error": "{}: {}".format(type(error).__name__, error)}
            found[model]["traceback"] = traceback.format_exc(limit=3)[-1500:]
    adapter.close()
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--data", required=True, help="the folder of prepared datasets")
    parser.add_argument("--models", nargs="+", required=True)
    parser.add_argument("--weights", help="the folder of shared initial weights, <model>.npz")
    parser.add_argument(
        "--settings", type=json.loads, default={}, help="the backend's settings, as JSON"
    )
    args = parser.parse_args(argv)
    print(json.dumps(check(args.backend, args.models, args.data, args.weights, args.settings)))


if __name__ == "__main__":
    main()
