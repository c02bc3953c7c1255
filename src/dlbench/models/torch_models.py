"""The workloads in plain PyTorch, layer for layer as the Keras definitions
(keras_models.py): same layers, parameter counts and initial weight
distributions (Glorot-uniform weights, zero biases, as Keras' defaults).
Images arrive channels-last, as the prepared data stores them; the models
take channels-first (PyTorch's layout). Importable without torch until a
model is built."""


def _glorot(module, nn):
    for layer in module.modules():
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(layer.weight)
            nn.init.zeros_(layer.bias)
    return module


def _channels(spec):
    height, width, channels = spec["input_shape"]
    return channels, height, width


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
BUILDERS = {"mlp": mlp, "cnn": cnn, "lenet": lenet}

# Keras' optimizer settings -> torch.optim (same update rules; Keras'
# epsilon is added after the square root in both).
OPTIMIZERS = {
    "rmsprop": (
        "RMSprop",
        {"rho": "alpha", "epsilon": "eps", "momentum": "momentum", "centered": "centered"},
    ),
    "adadelta": ("Adadelta", {"rho": "rho", "epsilon": "eps"}),
    "adam": ("Adam", {"beta_1": None, "beta_2": None, "epsilon": "eps"}),
    "sgd": ("SGD", {"momentum": "momentum", "nesterov": "nesterov"}),
}


def optimizer(torch, parameters, settings):
    name, renames = OPTIMIZERS[settings["name"]]
    kwargs = {"lr": settings["learning_rate"]}
    for key, value in settings.items():
        if key in ("name", "learning_rate"):
            continue
        if key not in renames:
            raise ValueError("optimizer {}: no torch equivalent for {!r}".format(name, key))
        if renames[key]:
            kwargs[renames[key]] = value
    if name == "Adam":
        kwargs["betas"] = (settings.get("beta_1", 0.9), settings.get("beta_2", 0.999))
    return getattr(torch.optim, name)(parameters, **kwargs)
