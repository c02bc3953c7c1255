"""What the workloads in plain PyTorch share
(dlbench/models/workloads/<model>/in_torch.py), layer for layer as the Keras
definitions (in_keras.py): same layers, parameter counts and initial weight
distributions (Keras' defaults: Glorot-uniform kernels, zero biases,
orthogonal recurrent kernels, LSTM forget-gate bias 1, embeddings uniform in
±0.05). Images arrive channels-first (the adapter converts the prepared
channels-last arrays to PyTorch's layout), words as int64 indices.
Importable without torch until a model is built.

Recurrent layers are torch.nn.LSTM / GRU (cuDNN's fused kernels on a GPU),
batch-first, and give the last step's output as Keras' LSTM(units) does.
Their gate orders differ from Keras' (LSTM i,f,g,o = Keras i,f,c,o; GRU
r,z,n vs Keras z,r,h), which leaves counts and initial distributions alike.
The GRU is Keras' reset_after=True variant, two biases as in torch. Keras'
LSTM has one bias where torch has two: bias_hh is held at zero and frozen
(requires_grad False), a constant rather than a weight, so the adapter
counts trainable parameters plus batch-norm statistics, as Keras' count_params.
"""


def glorot(module, nn):
    """Keras' Dense and Conv2D defaults: Glorot-uniform kernels, zero biases."""
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
    return module


def recurrent(module, nn):
    """Keras' defaults for embeddings (uniform in ±0.05) and recurrent
    layers (Glorot-uniform input kernels, orthogonal recurrent kernels, zero
    biases, LSTM forget-gate bias 1), then ``glorot`` for the rest."""
    for layer in module.modules():
        if isinstance(layer, nn.Embedding):
            nn.init.uniform_(layer.weight, -0.05, 0.05)
        if not isinstance(layer, (nn.LSTM, nn.GRU)):
            continue
        for name, weight in layer.named_parameters():
            if name.startswith("weight_ih"):
                nn.init.xavier_uniform_(weight)  # fans of Keras' (input, gates x units)
            elif name.startswith("weight_hh"):
                nn.init.orthogonal_(weight)
            else:
                nn.init.zeros_(weight)
            if isinstance(layer, nn.LSTM) and name.startswith("bias_ih"):
                nn.init.ones_(weight[layer.hidden_size : 2 * layer.hidden_size])  # unit_forget_bias
            if isinstance(layer, nn.LSTM) and name.startswith("bias_hh"):
                weight.requires_grad_(False)  # Keras' LSTM has one bias
    return glorot(module, nn)


# Keras layer class -> the torch module that holds the same weights, and how.
GRU_GATES = (1, 0, 2)  # torch r, z, n from Keras z, r, h


def _torch_arrays(keras_class, arrays, flattened_from, module, nn):
    import numpy as np

    from dlbench.models import initial_weights as shared

    if keras_class == "Dense" and isinstance(module, nn.Linear):
        return {
            "weight": shared.dense_out_in(arrays["kernel"], flattened_from),
            "bias": arrays["bias"],
        }
    if keras_class == "Conv2D" and isinstance(module, nn.Conv2d):
        return {"weight": shared.conv_oihw(arrays["kernel"]), "bias": arrays["bias"]}
    if keras_class == "Embedding" and isinstance(module, nn.Embedding):
        return {"weight": arrays["embeddings"]}
    if keras_class == "GRUCell" and isinstance(module, nn.GRU):
        bias = arrays["bias"]
        return {
            "weight_ih_l0": shared.gate_order(arrays["kernel"], GRU_GATES).T.copy(),
            "weight_hh_l0": shared.gate_order(arrays["recurrent_kernel"], GRU_GATES).T.copy(),
            "bias_ih_l0": shared.gate_order(bias[0], GRU_GATES),
            "bias_hh_l0": shared.gate_order(bias[1], GRU_GATES),
        }
    if keras_class == "LSTMCell" and isinstance(module, nn.LSTM):  # the same gate order
        return {
            "weight_ih_l0": arrays["kernel"].T.copy(),
            "weight_hh_l0": arrays["recurrent_kernel"].T.copy(),
            "bias_ih_l0": arrays["bias"],
            "bias_hh_l0": np.zeros_like(arrays["bias"]),  # Keras' LSTM has one bias
        }
    if keras_class == "BatchNormalization" and isinstance(module, nn.BatchNorm2d):
        return {
            "weight": arrays["gamma"],
            "bias": arrays["beta"],
            "running_mean": arrays["moving_mean"],
            "running_var": arrays["moving_variance"],
        }
    raise ValueError(
        "no conversion of Keras' {} to torch's {}".format(keras_class, type(module).__name__)
    )


def load_keras_weights(torch, net, layout, weights):
    """Copy the shared initial weights (Keras' axes, dlbench.models.initial_weights)
    into ``net``: its modules with weights, in order, take the Keras layers'
    weights in order, converted; every shape is checked before any copy."""
    from dlbench.models import initial_weights as shared

    nn = torch.nn
    modules = [
        module
        for module in net.modules()
        if list(module.parameters(recurse=False)) or isinstance(module, nn.BatchNorm2d)
    ]
    groups = shared.by_layer(layout, weights)
    if len(modules) != len(groups):
        raise ValueError(
            "torch has {} layers with weights, the Keras model {}".format(len(modules), len(groups))
        )
    # The k-th torch layer of a kind takes the k-th Keras layer of that kind:
    # a functional Keras model orders its layers by the graph (both of
    # babi_rnn's embeddings before its LSTMs), torch by construction.
    kinds = {
        "Dense": nn.Linear,
        "Conv2D": nn.Conv2d,
        "Embedding": nn.Embedding,
        "GRUCell": nn.GRU,
        "LSTMCell": nn.LSTM,
        "BatchNormalization": nn.BatchNorm2d,
    }
    waiting = list(groups)
    copies = []
    for module in modules:
        matching = [
            group for group in waiting if isinstance(module, kinds.get(group[0], type(None)))
        ]
        if not matching:
            raise ValueError("no Keras layer left for torch's {}".format(type(module).__name__))
        keras_class, arrays, flattened_from = matching[0]
        waiting.remove(matching[0])
        for name, values in _torch_arrays(keras_class, arrays, flattened_from, module, nn).items():
            target = getattr(module, name)
            if tuple(target.shape) != values.shape:
                raise ValueError(
                    "{}.{}: torch's shape {} is not the converted {}".format(
                        type(module).__name__, name, tuple(target.shape), values.shape
                    )
                )
            copies.append((target, values))
    with torch.no_grad():
        for target, values in copies:
            target.copy_(torch.from_numpy(values).to(target.device, target.dtype))


def channels_first_shape(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


def last(torch, rnn):
    """A batch-first recurrent layer's output at its last step."""

    class Last(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            return self.rnn(x)[0][:, -1]

    return Last()


def over_rows(torch, layer):
    """Keras' TimeDistributed over the image rows of (N, C, H, W): ``layer``
    runs on each row as a sequence of W steps of C values."""

    class Rows(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = layer

        def forward(self, x):
            n, channels, height, width = x.shape
            rows = x.permute(0, 2, 3, 1).reshape(n * height, width, channels)
            return self.layer(rows).reshape(n, height, -1)

    return Rows()


def story_question(torch, story, question, head):
    """Two named inputs, each encoded; the encodings concatenated."""

    class StoryQuestion(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.story, self.question, self.head = story, question, head

        def forward(self, inputs):
            encoded = [self.story(inputs["story"]), self.question(inputs["question"])]
            return self.head(torch.cat(encoded, dim=1))

    return StoryQuestion()


def bottleneck(torch, inputs, filters, stride, shortcut):
    """Keras' ResNet block1: 1x1 (strided) -> 3x3 -> 1x1 x4, plus the
    shortcut (a strided 1x1 convolution in a stack's first block)."""
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self):
            super().__init__()
            # Registered in Keras' order of weights (the shortcut's after
            # the 3x3), which the shared initial weights follow.
            self.first = nn.Sequential(conv_bn(nn, inputs, filters, 1, stride), nn.ReLU())
            self.second = nn.Sequential(conv_bn(nn, filters, filters, 3, 1, padding=1), nn.ReLU())
            self.shortcut = conv_bn(nn, inputs, 4 * filters, 1, stride) if shortcut else None
            self.third = conv_bn(nn, filters, 4 * filters, 1, 1)

        def forward(self, x):
            skip = x if self.shortcut is None else self.shortcut(x)
            return torch.relu(self.third(self.second(self.first(x))) + skip)

    return Bottleneck()


def conv_bn(nn, inputs, outputs, kernel, stride, padding=0):
    """Keras applications' Conv2D (with bias) + BatchNormalization
    (epsilon 1.001e-5, momentum 0.99: torch's 0.01)."""
    return nn.Sequential(
        nn.Conv2d(inputs, outputs, kernel, stride=stride, padding=padding),
        nn.BatchNorm2d(outputs, eps=1.001e-5, momentum=0.01),
    )
