"""lenet in PyTorch (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    """No activation on the convolutions, as in Caffe's LeNet."""
    nn = torch.nn
    channels, height, width = torch_layers.channels_first_shape(spec)
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    return torch_layers.glorot(
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
