"""deep_mnist in PyTorch (the workload: ``dlbench.models.workloads.deep_mnist``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    nn = torch.nn
    channels, height, width = torch_layers.channels_first_shape(spec)
    flat = 64 * (height // 4) * (width // 4)
    return torch_layers.glorot(
        nn.Sequential(
            nn.Conv2d(channels, 32, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(flat, 1024),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(1024, spec["classes"]),
        ),
        nn,
    )
