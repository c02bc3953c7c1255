"""resnet50 in PyTorch (the workload: ``dlbench.models.workloads.resnet50``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    """Keras' ResNet50(include_top=False, pooling="avg"): ResNet v1 with the
    stride on each stack's first 1x1 convolution, convolutions with biases,
    global average pooling to 2048 features."""
    nn = torch.nn
    channels = torch_layers.channels_first_shape(spec)[0]
    layers = [
        torch_layers.conv_bn(nn, channels, 64, 7, 2, padding=3),
        nn.ReLU(),
        nn.MaxPool2d(3, 2, 1),
    ]
    inputs = 64
    for filters, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for block in range(blocks):
            first = block == 0
            layers.append(
                torch_layers.bottleneck(torch, inputs, filters, stride if first else 1, first)
            )
            inputs = 4 * filters
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return torch_layers.glorot(nn.Sequential(*layers), nn)
