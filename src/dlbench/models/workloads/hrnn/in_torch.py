"""hrnn in PyTorch (the workload: ``dlbench.models.workloads.hrnn``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    """Hierarchical RNN: an LSTM encodes each row of pixels, a second LSTM
    the sequence of row encodings."""
    nn = torch.nn
    channels = torch_layers.channels_first_shape(spec)[0]
    return torch_layers.recurrent(
        nn.Sequential(
            torch_layers.over_rows(
                torch, torch_layers.last(torch, nn.LSTM(channels, 128, batch_first=True))
            ),
            torch_layers.last(torch, nn.LSTM(128, 128, batch_first=True)),
            nn.Linear(128, spec["classes"]),
        ),
        nn,
    )
