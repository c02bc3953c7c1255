"""FLOPs per sample of every workload, from its layer shapes (each workload's
``flop_layers`` in dlbench/models/workloads/<model>/, written with the helpers here).

The convention is the usual one for model FLOPs utilisation: FLOPs = 2 x the
multiply-adds of the matrix products, that is of the dense layers, the
convolutions and the recurrent layers' input and recurrent-state matmuls (at
every time step). Not counted: element-wise ops, activations, pooling,
batch normalisation, softmax, bias adds, embedding lookups, the loss and the
optimizer update.

``forward`` is one forward pass. ``training`` adds the backward pass as a
framework computes it: every layer with weights computes its weight gradient
and its input gradient, each as many FLOPs as its forward matmul, except
- the first layer, fed with the data itself, needs no input gradient (a layer
  fed by an Embedding does need one: the embedding is trained);
- a recurrent layer's state matmul needs no input gradient at its first step:
  the initial state is a constant (zeros), so that gradient spans steps - 1.

``dims`` holds what depends on the data, as the harness hands it to the
model builders (a prepared dataset's ``meta`` plus ``input_shape``):
``input_shape`` and ``classes`` (defaults: the input kind's shape in
catalog.INPUT_SHAPES, the workload's classes in its definition), imdb_gru's
``vocabulary``, and babi_rnn's ``story_length``, ``query_length``,
``vocabulary`` and ``classes`` (no defaults: they come from the data; see
``dims_of``). the tests' flops_check (tests/e2e) counts the same with PyTorch's own counter.
Importable on Python 3.6; only ``dims_of`` needs numpy.
"""

import collections
import json
import zipfile

from dlbench import catalog
from dlbench.models import workloads

# One layer's matrix products, in multiply-adds: its forward pass, and its
# input gradient in the backward pass (its weight gradient equals the forward).
Layer = collections.namedtuple("Layer", "multiply_adds input_gradient")

GATES = {"lstm": 4, "gru": 3, "simple": 1}

DEFAULTS = {
    "image28": {"input_shape": list(catalog.INPUT_SHAPES["image28"]), "classes": 10},
    "image32": {"input_shape": list(catalog.INPUT_SHAPES["image32"]), "classes": 10},
    "image224": {"input_shape": list(catalog.INPUT_SHAPES["image224"])},
    "words150": {
        "input_shape": list(catalog.INPUT_SHAPES["words150"]),
        "classes": 2,
        "vocabulary": catalog.DATASETS["imdb"]["vocabulary"],
    },
    "story_question": {},
}
# The dims each input kind takes from a prepared dataset.
DIMS = {
    "image28": ("input_shape", "classes"),
    "image32": ("input_shape", "classes"),
    "image224": ("input_shape",),
    "words150": ("input_shape", "classes", "vocabulary"),
    "story_question": ("story_length", "query_length", "vocabulary", "classes"),
}


def dense(inputs, outputs, on_data=False):
    return _layer(inputs * outputs, on_data)


def conv2d(
    height_out, width_out, kernel_height, kernel_width, channels_in, channels_out, on_data=False
):
    """A convolution (no groups, no dilation) giving height_out x width_out outputs."""
    return _layer(
        height_out * width_out * kernel_height * kernel_width * channels_in * channels_out,
        on_data,
    )


def recurrent(kind, steps, inputs, units, sequences=1, on_data=False):
    """An LSTM, GRU or simple RNN layer run over ``sequences`` sequences of
    ``steps`` steps each, per sample."""
    width = GATES[kind] * units
    input_side = sequences * steps * inputs * width
    state_side = sequences * steps * units * width
    state_gradient = sequences * (steps - 1) * units * width
    return Layer(input_side + state_side, (0 if on_data else input_side) + state_gradient)


def _layer(multiply_adds, on_data):
    return Layer(multiply_adds, 0 if on_data else multiply_adds)


def _output_size(size, kernel, stride=1, padding=0):
    return (size + 2 * padding - kernel) // stride + 1


class Activations(object):
    """The (height, width, channels) of a feed-forward stack's activations
    as its layers go by, and the records of its layers with weights."""

    def __init__(self, input_shape):
        self.height, self.width, self.channels = input_shape
        self.layers = []

    def conv(self, filters, kernel, stride=1, padding=0):
        self.height = _output_size(self.height, kernel, stride, padding)
        self.width = _output_size(self.width, kernel, stride, padding)
        self.layers.append(
            conv2d(self.height, self.width, kernel, kernel, self.channels, filters, not self.layers)
        )
        self.channels = filters
        return self

    def shortcut(self, filters, stride):
        """ResNet's projection shortcut: a strided 1x1 convolution beside
        the main path, which goes on from the same activations."""
        height, width = _output_size(self.height, 1, stride), _output_size(self.width, 1, stride)
        self.layers.append(conv2d(height, width, 1, 1, self.channels, filters))
        return self

    def pool(self, size, stride=None, padding=0):
        self.height = _output_size(self.height, size, stride or size, padding)
        self.width = _output_size(self.width, size, stride or size, padding)
        return self

    def dense(self, units):
        """A dense layer on the flattened activations."""
        inputs = self.height * self.width * self.channels
        self.layers.append(dense(inputs, units, not self.layers))
        self.height, self.width, self.channels = 1, 1, units
        return self


def spec_of(model, dims):
    """What the model is built from: ``dims`` over its input kind's defaults."""
    kind = workloads.facts(model).INPUTS[0]
    spec = dict(DEFAULTS[kind])
    spec.update(dims)
    missing = [key for key in DIMS[kind] if key not in spec]
    if missing:
        raise KeyError(
            "{} needs dims {} (a prepared dataset's: dims_of)".format(model, ", ".join(missing))
        )
    return spec


def per_sample(model, dims):
    """FLOPs per sample of ``model``: {"forward": n, "training": n}."""
    layers = workloads.facts(model).flop_layers(spec_of(model, dims))
    forward = sum(layer.multiply_adds for layer in layers)
    backward = sum(layer.multiply_adds + layer.input_gradient for layer in layers)
    return {"forward": 2 * forward, "training": 2 * (forward + backward)}


def _header_shape(archive, member):
    """The shape of an .npy member from its header, without reading its data."""
    from numpy.lib import format as npy

    with archive.open(member) as handle:
        version = npy.read_magic(handle)
        read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        return read(handle)[0]


def dims_of(data_path, model):
    """The dims of ``model`` on a prepared dataset (dlbench.data.preparation.prepare):
    numbers from its ``meta`` and the input shape from x_train's header."""
    import numpy

    kind = workloads.facts(model).INPUTS[0]
    with numpy.load(str(data_path), allow_pickle=False) as arrays:
        found = json.loads(str(arrays["meta"]))
    with zipfile.ZipFile(str(data_path)) as archive:
        if "x_train.npy" in archive.namelist():
            found["input_shape"] = list(_header_shape(archive, "x_train.npy")[1:])
    missing = [key for key in DIMS[kind] if key not in found]
    if missing:
        raise ValueError(
            "{} holds no {} for {}: not a prepared {} dataset".format(
                data_path, ", ".join(missing), model, kind
            )
        )
    return {key: found[key] for key in DIMS[kind]}


def per_sample_of(data_path, model):
    return per_sample(model, dims_of(data_path, model))
