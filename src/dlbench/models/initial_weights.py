"""Initial weights shared by every backend: one draw per (dataset, model, seed).

The workflow makes them once (rule ``initial_weights``), in the keras-torch
environment: it builds the workload's Keras model on the prepared data's
shapes and draws each of its weights from numpy with the initialiser the
layer declares (Glorot uniform, zeros, orthogonal, LSTM's forget-gate ones,
...), never from a framework's generator. The file, sealed beside the
prepared data, holds the weights in Keras' order and axes (``w0000``, ...)
and their layout: per weight its layer, layer class, variable name, shape,
the initialiser it was drawn with, and, for a dense layer fed by a
flattened feature map, that map's (height, width, channels), so that a
framework which flattens channels-first can reorder the rows. Every backend
loads the same file before its clock starts and converts it to its own axes
(dlbench.run.backends ... ``load_initial_weights``); its record keeps the file's
checksum.

This module reads the shared weights' layout, which every backend converts
from (numpy only, Python 3.6); the file is drawn, written and read by
dlbench.run.shared_weights.
"""

import hashlib
import math

# The file's format, kept in its layout. 2: the layout under the key ``layout``
# (1 named it ``manifest``; the workflow re-makes every file when this module
# or dlbench.run.shared_weights changes: rule initial_weights's code inputs).
FORMAT = 2
TRUNCATED_NORMAL_STDDEV = 0.87962566103423978  # Keras: stddev of a normal truncated at 2


def fans(shape):
    """Keras' compute_fans: (fan_in, fan_out) of a weight shape."""
    shape = tuple(shape)
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = 1
    for size in shape[:-2]:
        receptive *= size
    return shape[-2] * receptive, shape[-1] * receptive


def _truncated_normal(rng, shape, mean, stddev):
    """Normal samples redrawn until within two standard deviations."""
    import numpy as np

    values = rng.normal(0.0, 1.0, size=shape)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = rng.normal(0.0, 1.0, size=int(outside.sum()))
        outside = np.abs(values) > 2
    return mean + stddev * values


def draw(initialiser, shape, rng):
    """float32 values of ``shape`` drawn as ``initialiser`` (a layout
    entry's description) says, from the numpy RandomState ``rng``."""
    import numpy as np

    kind = initialiser["kind"]
    shape = tuple(shape)
    if kind == "constant":
        values = np.full(shape, initialiser["value"], dtype="float64")
    elif kind == "uniform":
        values = rng.uniform(initialiser["minval"], initialiser["maxval"], size=shape)
    elif kind == "normal":
        values = rng.normal(initialiser["mean"], initialiser["stddev"], size=shape)
    elif kind == "truncated_normal":
        values = _truncated_normal(rng, shape, initialiser["mean"], initialiser["stddev"])
    elif kind == "variance_scaling":
        fan_in, fan_out = fans(shape)
        denominator = {"fan_in": fan_in, "fan_out": fan_out}.get(
            initialiser["mode"], (fan_in + fan_out) / 2.0
        )
        scale = initialiser["scale"] / max(1.0, denominator)
        distribution = initialiser["distribution"]
        if distribution == "truncated_normal":
            values = _truncated_normal(rng, shape, 0.0, math.sqrt(scale) / TRUNCATED_NORMAL_STDDEV)
        elif distribution == "untruncated_normal":
            values = rng.normal(0.0, math.sqrt(scale), size=shape)
        else:
            limit = math.sqrt(3.0 * scale)
            values = rng.uniform(-limit, limit, size=shape)
    elif kind == "orthogonal":
        rows = int(np.prod(shape[:-1]))
        columns = shape[-1]
        a = rng.normal(0.0, 1.0, size=(max(rows, columns), min(rows, columns)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < columns:
            q = q.T
        values = initialiser["gain"] * q.reshape(shape)
    elif kind == "forget_gate_bias":  # LSTM's unit_forget_bias: [inner, ones, inner x 2]
        units = shape[0] // 4
        parts = [draw(initialiser["inner"], (units,), rng), np.ones(units)]
        parts.append(draw(initialiser["inner"], (2 * units,), rng))
        values = np.concatenate(parts)
    else:
        raise ValueError("no numpy draw for initialiser {!r}".format(initialiser))
    return values.astype("float32")


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_shapes(found, layout):
    """Refuse weights whose count or shapes differ from ``found`` (the
    model's, in the same order and axes), before anything is assigned."""
    expected = [tuple(entry["shape"]) for entry in layout["weights"]]
    found = [tuple(int(size) for size in shape) for shape in found]
    if len(found) != len(expected):
        raise ValueError(
            "the model has {} weights, the shared file {}".format(len(found), len(expected))
        )
    for index, (mine, theirs) in enumerate(zip(found, expected)):
        if mine != theirs:
            raise ValueError(
                "weight {} ({}): the model's shape {} is not the file's {}".format(
                    index, layout["weights"][index]["path"], mine, theirs
                )
            )


def by_layer(layout, weights):
    """The weights grouped by the Keras layer that owns them, in order:
    [(class, {variable: array}, flattened_from or None)]."""
    groups = []
    for entry, values in zip(layout["weights"], weights):
        key = (entry["path"].rsplit("/", 1)[0], entry["class"])
        if not groups or groups[-1][0] != key:
            groups.append((key, {}, entry.get("flattened_from")))
        groups[-1][1][entry["variable"]] = values
    return [(key[1], arrays, flattened) for key, arrays, flattened in groups]


# Keras' axes converted to the channels-first (output, input) axes of
# torch, Chainer and MXNet Gluon.


def dense_out_in(kernel, flattened_from=None):
    """A dense kernel (inputs, units) as (units, inputs); fed by a flattened
    (height, width, channels) map, its rows reordered to the (channels,
    height, width) order in which a channels-first framework flattens."""
    import numpy as np

    if flattened_from:
        height, width, channels = flattened_from
        kernel = kernel.reshape(height, width, channels, -1).transpose(2, 0, 1, 3)
        kernel = kernel.reshape(height * width * channels, -1)
    return np.ascontiguousarray(kernel.T)


def conv_oihw(kernel):
    """A Conv2D kernel (height, width, inputs, filters) as (filters, inputs, height, width)."""
    import numpy as np

    return np.ascontiguousarray(kernel.transpose(3, 2, 0, 1))


def gate_order(values, order, axis=-1):
    """Reorder the gate blocks along ``axis``: ``order`` lists Keras' block
    index for each of the framework's blocks (GRU z,r,h -> r,z,n: (1, 0, 2))."""
    import numpy as np

    blocks = np.split(values, len(order), axis=axis)
    return np.concatenate([blocks[index] for index in order], axis=axis)


def channels_first(layout, weights, dense_units_first=True):
    """The weights in the axes of a framework whose convolutions are
    (filters, inputs, height, width) and that flattens feature maps
    channels-first (Chainer, MXNet Gluon: dense weights (units, inputs);
    PyTensor: (inputs, units), ``dense_units_first`` False), in Keras'
    order: [(shape, values)]. Layers other than dense and convolution
    layers are not converted here."""
    converted = []
    for keras_class, arrays, flattened_from in by_layer(layout, weights):
        if keras_class == "Dense":
            kernel = dense_out_in(arrays["kernel"], flattened_from)
            if not dense_units_first:
                kernel = kernel.T.copy()
            found = [kernel, arrays["bias"]]
        elif keras_class == "Conv2D":
            found = [conv_oihw(arrays["kernel"]), arrays["bias"]]
        else:
            raise ValueError("no channels-first conversion of Keras' {}".format(keras_class))
        converted.extend((tuple(values.shape), values) for values in found)
    return converted


def assign_by_shape(targets, converted, what):
    """Pair each of ``targets`` (shapes, in the framework's order) with the
    next converted weight of its shape; all must pair. Returns the values in
    the targets' order."""
    waiting = list(converted)
    found = []
    for shape in targets:
        matching = [item for item in waiting if item[0] == tuple(shape)]
        if not matching:
            raise ValueError("no Keras weight left of {}'s shape {}".format(what, tuple(shape)))
        waiting.remove(matching[0])
        found.append(matching[0][1])
    if waiting:
        raise ValueError("{} Keras weights have no place in {}".format(len(waiting), what))
    return found


def record_of(path, loaded, reason=None, trained=None):
    """What a run record says about its initial weights (and, for weights
    the workflow trained, how: dlbench.run.trained_weights)."""
    found = {"loaded": bool(loaded), "file": path, "sha256": sha256_of(path)}
    if reason:
        found["reason"] = reason
    if trained:
        found["trained"] = {
            key: trained[key] for key in ("backend", "hyper", "test_accuracy") if key in trained
        }
    return found
