"""The shared initial weights' file (dlbench.models.initial_weights says what
it holds): drawn once per workload and seed (rule ``initial_weights``, in the
keras-torch environment), written with its seal and read, checked against
it, before a run's clock starts, and loaded into the run's model
(``load_initial_weights``). ``read``, ``write`` and ``load_initial_weights``
import on Python 3.6; ``describe``/``generate`` need Keras 3.

    python -m dlbench.run.shared_weights --model NAME --data DATA.npz --seed N --output OUT.npz
"""

import argparse
import json
import os
import sys

from dlbench.models import initial_weights
from dlbench.models.initial_weights import FORMAT, draw

# The file's key of the weights' layout (dlbench.models.initial_weights); a
# format 1 file named it "manifest". Not read: the workflow re-makes a file
# when the code that draws or reads it changes (rule initial_weights's code
# inputs), so a format 1 file is one a newer workflow has not made again.
LAYOUT_KEY = "layout"
FORMAT_1_KEY = "manifest"


def read(path):
    """(layout, weights): the layout's entries and the weights in Keras'
    order, checked against the seal the workflow gave the file."""
    import numpy as np

    from dlbench.run import integrity

    if os.path.exists(integrity.seal_path(path)):
        integrity.verify(path)
    with np.load(path, allow_pickle=False) as arrays:
        if LAYOUT_KEY not in arrays.files and FORMAT_1_KEY in arrays.files:
            raise ValueError(
                "{}: shared weights of format 1 (their layout under {!r}); the workflow "
                "draws them again in format {} (rule initial_weights)".format(
                    path, FORMAT_1_KEY, FORMAT
                )
            )
        layout = json.loads(str(arrays[LAYOUT_KEY]))
        weights = [arrays["w{:04d}".format(index)] for index in range(len(layout["weights"]))]
    return layout, weights


def load_initial_weights(spec, adapter, model):
    """The run's shared initial weights (the RunSpec names the file), loaded
    into ``model`` before the clock starts: their record. A backend that
    cannot load them keeps its own initialisation and its record says why;
    None where the spec names none."""
    path = spec.initial_weights
    if not path:
        return None
    loader = adapter.load_initial_weights  # None: the backend cannot load them
    if loader is None:
        return initial_weights.record_of(
            path, False, "{} cannot load shared weights yet".format(spec.backend)
        )
    layout, weights = read(path)
    trained = layout.get("trained")
    try:
        loader(model, layout, weights)
    except Exception as error:  # the run goes on from the backend's own draw
        reason = "could not load them: {}: {}".format(type(error).__name__, error)
        print("initial weights: " + reason, flush=True)
        return initial_weights.record_of(path, False, reason, trained)
    print("initial weights: loaded {}".format(path), flush=True)
    return initial_weights.record_of(path, True, trained=trained)


# Keras' side: which initialiser each weight of a built model declares.

INITIALISER_ATTRIBUTES = {
    "kernel": "kernel_initializer",
    "recurrent_kernel": "recurrent_initializer",
    "bias": "bias_initializer",
    "embeddings": "embeddings_initializer",
    "gamma": "gamma_initializer",
    "beta": "beta_initializer",
    "moving_mean": "moving_mean_initializer",
    "moving_variance": "moving_variance_initializer",
}


def describe(initialiser):
    """A Keras initialiser as a plain description ``draw`` understands, or
    None where it has no numpy draw here."""
    from keras import initializers

    if isinstance(initialiser, initializers.Zeros):
        return {"kind": "constant", "value": 0.0}
    if isinstance(initialiser, initializers.Ones):
        return {"kind": "constant", "value": 1.0}
    if isinstance(initialiser, initializers.Constant):
        return {"kind": "constant", "value": float(initialiser.value)}
    if isinstance(initialiser, initializers.VarianceScaling):
        if getattr(initialiser, "input_axes", None) or getattr(initialiser, "output_axes", None):
            return None
        return {
            "kind": "variance_scaling",
            "scale": float(initialiser.scale),
            "mode": initialiser.mode,
            "distribution": initialiser.distribution,
        }
    if isinstance(initialiser, initializers.RandomUniform):
        return {
            "kind": "uniform",
            "minval": float(initialiser.minval),
            "maxval": float(initialiser.maxval),
        }
    if isinstance(initialiser, initializers.TruncatedNormal):
        return {
            "kind": "truncated_normal",
            "mean": float(initialiser.mean),
            "stddev": float(initialiser.stddev),
        }
    if isinstance(initialiser, initializers.RandomNormal):
        return {
            "kind": "normal",
            "mean": float(initialiser.mean),
            "stddev": float(initialiser.stddev),
        }
    if isinstance(initialiser, initializers.Orthogonal):
        return {"kind": "orthogonal", "gain": float(initialiser.gain)}
    return None


def _own_variables(layer):
    """The variables a layer (or a recurrent layer's cell) creates itself."""
    found = list(getattr(layer, "_trainable_variables", [])) + list(
        getattr(layer, "_non_trainable_variables", [])
    )
    return [(layer, variable) for variable in found]


def _initialiser_of(layer, variable):
    name = variable.name.split("/")[-1]
    attribute = INITIALISER_ATTRIBUTES.get(name)
    initialiser = getattr(layer, attribute, None) if attribute else None
    described = describe(initialiser) if initialiser is not None else None
    if described and name == "bias" and getattr(layer, "unit_forget_bias", False):
        return {"kind": "forget_gate_bias", "inner": described}
    return described


def _flattened_from(model):
    """{id of a Dense layer: (height, width, channels)} for dense layers fed
    by a Flatten of a rank-3 feature map."""
    found = {}
    layers = [layer for layer in model.layers]
    for before, after in zip(layers, layers[1:]):
        if type(before).__name__ == "Flatten" and type(after).__name__ == "Dense":
            shape = tuple(before.input.shape[1:]) if hasattr(before, "input") else ()
            if len(shape) == 3:
                found[id(after)] = [int(size) for size in shape]
    return found


def generate(model, seed):
    """(layout, weights) for a built Keras model: each weight drawn from
    numpy with its declared initialiser (a RandomState per weight, seeded by
    ``seed`` and its index); a weight whose initialiser has no numpy draw
    keeps Keras' own seeded draw, and the layout says so."""
    import numpy as np

    owners = {}
    for layer in model._flatten_layers(include_self=False):
        for owner, variable in _own_variables(layer):
            owners[id(variable)] = owner
    flattened = _flattened_from(model)
    entries, weights = [], []
    for index, variable in enumerate(model.weights):
        owner = owners.get(id(variable))
        initialiser = _initialiser_of(owner, variable) if owner is not None else None
        shape = tuple(int(size) for size in variable.shape)
        if initialiser is None:
            values = np.asarray(variable.numpy(), dtype="float32")
            drawn = "keras' own seeded draw (no numpy draw for its initialiser)"
        else:
            values = draw(initialiser, shape, np.random.RandomState([seed, index]))
            drawn = "numpy"
        entry = {
            "path": variable.path,
            "layer": owner.name if owner is not None else None,
            "class": type(owner).__name__ if owner is not None else None,
            "variable": variable.name.split("/")[-1],
            "shape": list(shape),
            "trainable": bool(variable.trainable),
            "initialiser": initialiser,
            "drawn": drawn,
        }
        if owner is not None and id(owner) in flattened:
            entry["flattened_from"] = flattened[id(owner)]
        entries.append(entry)
        weights.append(values)
    return {"format": FORMAT, "seed": seed, "weights": entries}, weights


def write(path, layout, weights):
    import numpy as np

    from dlbench.run import integrity

    arrays = {"w{:04d}".format(index): values for index, values in enumerate(weights)}
    tmp = path + ".tmp.npz"
    arrays[LAYOUT_KEY] = np.array(json.dumps(layout, sort_keys=True))
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    integrity.seal(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--custom", help="the model's custom_models entry, as JSON")
    parser.add_argument("--data", required=True, help="the prepared dataset (.npz)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--model-check", help="a model of the user's: its check's verdict")
    args = parser.parse_args(argv)
    from dlbench.run import model_check, run_data

    failed = run_data.unavailable_reason(args.data)
    if not failed and args.model_check:
        failed = model_check.verdict(args.model_check)
    if failed:  # its runs never start: nothing to draw, the reason kept instead
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        write(
            args.output,
            {"format": FORMAT, "seed": args.seed, "weights": [], "not_drawn": failed},
            [],
        )
        print(failed)
        return 0
    os.environ["KERAS_BACKEND"] = "torch"
    import keras
    import torch

    from dlbench.registry import Registry
    from dlbench.run import run_data

    torch.set_num_threads(1)  # a draw, not a benchmark
    registry = Registry({args.model: json.loads(args.custom)} if args.custom else None)
    keras.utils.set_random_seed(args.seed)  # for the weights numpy cannot draw
    data = run_data.load_dataset(args.data)
    model = registry.builder(args.model, "keras")(keras, data["meta"])
    layout, weights = generate(model, args.seed)
    layout.update(model=args.model, keras=keras.__version__)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    write(args.output, layout, weights)
    for entry in layout["weights"]:
        print(
            "{path}: {shape} {drawn} {initialiser}".format(
                **dict(entry, initialiser=json.dumps(entry["initialiser"]))
            )
        )


if __name__ == "__main__":
    sys.exit(main())
