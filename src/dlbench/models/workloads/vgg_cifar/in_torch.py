"""vgg_cifar in PyTorch (the workload: ``dlbench.models.workloads.vgg_cifar``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    """The VGG-style CNN of the DeepLearningFrameworks comparison."""
    nn = torch.nn
    channels, height, width = torch_layers.channels_first_shape(spec)
    flat = 100 * (height // 4) * (width // 4)
    return torch_layers.glorot(
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
