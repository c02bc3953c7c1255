"""imdb_gru in PyTorch (the workload: ``dlbench.models.workloads.imdb_gru``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    nn = torch.nn
    return torch_layers.recurrent(
        nn.Sequential(
            nn.Embedding(spec["vocabulary"], 125),
            torch_layers.last(torch, nn.GRU(125, 100, batch_first=True)),
            nn.Linear(100, spec["classes"]),
        ),
        nn,
    )
