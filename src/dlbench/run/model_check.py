"""A model of the user's, checked once per dataset before any of its runs
(rule check_custom_model), in the Keras environment that draws the shared
weights: its builder runs, returns a Keras model, the model takes the
dataset's inputs and ends in one output per class. The verdict is written
whatever happens; a model that fails makes its cells ``invalid`` with that
reason (dlbench.run.supervise reads it) and none of its runs starts.
Importable on Python 3.6.
"""

import argparse
import json
import os
import sys
import traceback


def _where(error, path):
    """The line of the model's file where ``error`` was raised, if any."""
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(error.__traceback__)
        if os.path.abspath(frame.filename) == os.path.abspath(path)
    ]
    return ", line {}".format(lines[-1]) if lines else ""


def check(keras, model_name, data, registry):
    """(ok, reason, facts) for the user's model ``model_name`` (one of
    ``registry``'s) on the prepared ``data`` (run_data.load_dataset)."""
    from dlbench.run import run_data

    path, builder = registry.workload(model_name).file, registry.workload(model_name).builder
    try:
        build = registry.builder(model_name, "keras")
    except Exception as error:  # the file raised on import, or lost its builder
        return (
            False,
            "{}{}: importing it raised {}: {}".format(
                path, _where(error, path), type(error).__name__, error
            ),
            {},
        )
    try:
        model = build(keras, data["meta"])
    except Exception as error:
        return (
            False,
            "{}{}: {}(keras, spec) raised {}: {}".format(
                path,
                _where(error, path),
                builder,
                type(error).__name__,
                error,
            ),
            {},
        )
    if not isinstance(model, keras.Model):
        return (
            False,
            "{}: {}(keras, spec) returned {}, not a Keras model".format(
                path, builder, type(model).__name__
            ),
            {},
        )
    batch = run_data.take(data["x_train"], slice(0, 2))
    try:
        outputs = keras.ops.convert_to_numpy(model(batch, training=False))
    except Exception as error:
        return (
            False,
            "{}: the model does not take this dataset's inputs {}: {}: {}".format(
                path, data["meta"].get("input_shape"), type(error).__name__, error
            ),
            {},
        )
    classes = data["meta"]["classes"]
    facts = {"parameters": int(model.count_params()), "output_shape": list(outputs.shape)}
    if tuple(outputs.shape) != (2, classes):
        return (
            False,
            (
                "{}: the model's output has shape {} for a batch of 2; the dataset has {} "
                "classes: end it in {} outputs (Dense({}, activation='softmax'))".format(
                    path, tuple(outputs.shape), classes, classes, classes
                )
            ),
            facts,
        )
    return True, None, facts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--custom", required=True, help="its custom_models entry, as JSON")
    parser.add_argument("--data", required=True, help="the prepared dataset (.npz)")
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    entry = json.loads(args.custom)
    found = {"model": args.model, "file": entry["file"], "data": args.data}
    os.environ.setdefault("KERAS_BACKEND", "torch")
    from dlbench.run import run_data

    try:
        import keras

        from dlbench.registry import Registry

        registry = Registry({args.model: entry})
        ok, reason, facts = check(keras, args.model, run_data.load_dataset(args.data), registry)
        found.update(facts, keras=keras.__version__)
    except run_data.DataUnavailable as error:  # its cells say why themselves (supervise)
        ok, reason = False, "not checked: its dataset is unavailable: {}".format(error)
    except Exception as error:  # the environment itself: say so, never stop the workflow
        ok, reason = False, "the check could not run: {}: {}".format(type(error).__name__, error)
    found.update(ok=ok, reason=reason)
    with open(args.output, "w") as handle:
        json.dump(found, handle, indent=1)
    print("model check of {}: {}".format(args.model, "ok" if ok else reason))
    return 0


def verdict(path):
    """The reason a checked model's cells are invalid, or None."""
    with open(path) as handle:
        found = json.load(handle)
    if found.get("ok"):
        return None
    return "the model of your own failed its check: {}".format(found.get("reason"))


if __name__ == "__main__":
    sys.exit(main())
