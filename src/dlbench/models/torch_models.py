"""The workloads in plain PyTorch, layer for layer as the Keras definitions
(keras_models.py): same layers, parameter counts and initial weight
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


def _glorot(module, nn):
    """Keras' Dense and Conv2D defaults: Glorot-uniform kernels, zero biases."""
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
    return module


def _recurrent(module, nn):
    """Keras' defaults for embeddings (uniform in ±0.05) and recurrent
    layers (Glorot-uniform input kernels, orthogonal recurrent kernels, zero
    biases, LSTM forget-gate bias 1), then ``_glorot`` for the rest."""
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
    return _glorot(module, nn)


def _channels(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


def _last(torch, rnn):
    """A batch-first recurrent layer's output at its last step."""

    class Last(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x):
            return self.rnn(x)[0][:, -1]

    return Last()


def _rows(torch, layer):
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


def _story_question(torch, story, question, head):
    """Two named inputs, each encoded; the encodings concatenated."""

    class StoryQuestion(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.story, self.question, self.head = story, question, head

        def forward(self, inputs):
            encoded = [self.story(inputs["story"]), self.question(inputs["question"])]
            return self.head(torch.cat(encoded, dim=1))

    return StoryQuestion()


def _bottleneck(torch, inputs, filters, stride, shortcut):
    """Keras' ResNet block1: 1x1 (strided) -> 3x3 -> 1x1 x4, plus the
    shortcut (a strided 1x1 convolution in a stack's first block)."""
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self):
            super().__init__()
            self.residual = nn.Sequential(
                _conv_bn(nn, inputs, filters, 1, stride),
                nn.ReLU(),
                _conv_bn(nn, filters, filters, 3, 1, padding=1),
                nn.ReLU(),
                _conv_bn(nn, filters, 4 * filters, 1, 1),
            )
            self.shortcut = _conv_bn(nn, inputs, 4 * filters, 1, stride) if shortcut else None

        def forward(self, x):
            skip = x if self.shortcut is None else self.shortcut(x)
            return torch.relu(self.residual(x) + skip)

    return Bottleneck()


def _conv_bn(nn, inputs, outputs, kernel, stride, padding=0):
    """Keras applications' Conv2D (with bias) + BatchNormalization
    (epsilon 1.001e-5, momentum 0.99: torch's 0.01)."""
    return nn.Sequential(
        nn.Conv2d(inputs, outputs, kernel, stride=stride, padding=padding),
        nn.BatchNorm2d(outputs, eps=1.001e-5, momentum=0.01),
    )


def mlp(torch, spec):
    nn = torch.nn
    channels, height, width = _channels(spec)
    return _glorot(
        nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * height * width, 512),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Dropout(0.2),
            nn.Linear(512, spec["classes"]),
        ),
        nn,
    )


def cnn(torch, spec):
    nn = torch.nn
    channels, height, width = _channels(spec)
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return _glorot(
        nn.Sequential(
            nn.Conv2d(channels, 32, 3),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Dropout(0.25),
            nn.Flatten(),
            nn.Linear(flat, 128),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(128, spec["classes"]),
        ),
        nn,
    )


def hrnn(torch, spec):
    """Hierarchical RNN: an LSTM encodes each row of pixels, a second LSTM
    the sequence of row encodings."""
    nn = torch.nn
    channels = _channels(spec)[0]
    return _recurrent(
        nn.Sequential(
            _rows(torch, _last(torch, nn.LSTM(channels, 128, batch_first=True))),
            _last(torch, nn.LSTM(128, 128, batch_first=True)),
            nn.Linear(128, spec["classes"]),
        ),
        nn,
    )


def cifar_cnn(torch, spec):
    nn = torch.nn
    channels, height, width = _channels(spec)
    flat = 64 * (((height - 2) // 2 - 2) // 2) * (((width - 2) // 2 - 2) // 2)
    return _glorot(
        nn.Sequential(
            nn.Conv2d(channels, 32, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Dropout(0.25),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Dropout(0.25),
            nn.Flatten(),
            nn.Linear(flat, 512),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(512, spec["classes"]),
        ),
        nn,
    )


def vgg_cifar(torch, spec):
    """The VGG-style CNN of the DeepLearningFrameworks comparison."""
    nn = torch.nn
    channels, height, width = _channels(spec)
    flat = 100 * (height // 4) * (width // 4)
    return _glorot(
        nn.Sequential(
            nn.Conv2d(channels, 50, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(50, 50, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2, stride=2),
            nn.Dropout(0.25),
            nn.Conv2d(50, 100, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(100, 100, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2, stride=2),
            nn.Dropout(0.25),
            nn.Flatten(),
            nn.Linear(flat, 512),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(512, spec["classes"]),
        ),
        nn,
    )


def imdb_gru(torch, spec):
    nn = torch.nn
    return _recurrent(
        nn.Sequential(
            nn.Embedding(spec["vocabulary"], 125),
            _last(torch, nn.GRU(125, 100, batch_first=True)),
            nn.Linear(100, spec["classes"]),
        ),
        nn,
    )


def babi_rnn(torch, spec):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    nn = torch.nn

    def encoder():
        return nn.Sequential(
            nn.Embedding(spec["vocabulary"], 50), _last(torch, nn.LSTM(50, 100, batch_first=True))
        )

    return _recurrent(
        _story_question(torch, encoder(), encoder(), nn.Linear(200, spec["classes"])), nn
    )


def resnet50(torch, spec):
    """Keras' ResNet50(include_top=False, pooling="avg"): ResNet v1 with the
    stride on each stack's first 1x1 convolution, convolutions with biases,
    global average pooling to 2048 features."""
    nn = torch.nn
    channels = _channels(spec)[0]
    layers = [_conv_bn(nn, channels, 64, 7, 2, padding=3), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    inputs = 64
    for filters, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for block in range(blocks):
            first = block == 0
            layers.append(_bottleneck(torch, inputs, filters, stride if first else 1, first))
            inputs = 4 * filters
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return _glorot(nn.Sequential(*layers), nn)


def lenet(torch, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    nn = torch.nn
    channels, height, width = _channels(spec)
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return _glorot(
        nn.Sequential(
            nn.Conv2d(channels, 20, 5),
            nn.MaxPool2d(2),
            nn.Conv2d(20, 50, 5),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(flat, 500),
            nn.ReLU(),
            nn.Linear(500, spec["classes"]),
        ),
        nn,
    )


# The last layer gives logits: the loss is softmax cross-entropy on them (one
# fused, stable op) and predict applies the softmax, as Keras' output layer.
BUILDERS = {
    "mlp": mlp,
    "cnn": cnn,
    "hrnn": hrnn,
    "cifar_cnn": cifar_cnn,
    "vgg_cifar": vgg_cifar,
    "imdb_gru": imdb_gru,
    "babi_rnn": babi_rnn,
    "resnet50": resnet50,
    "lenet": lenet,
}
