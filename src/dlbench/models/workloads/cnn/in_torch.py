"""cnn in PyTorch (the workload: ``dlbench.models.workloads.cnn``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    nn = torch.nn
    channels, height, width = torch_layers.channels_first_shape(spec)
    flat = 64 * ((height - 4) // 2) * ((width - 4) // 2)
    return torch_layers.glorot(
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
