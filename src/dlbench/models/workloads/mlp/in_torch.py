"""mlp in PyTorch (the workload: ``dlbench.models.workloads.mlp``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    nn = torch.nn
    channels, height, width = torch_layers.channels_first_shape(spec)
    return torch_layers.glorot(
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
