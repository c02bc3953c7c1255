"""babi_rnn in PyTorch (the workload: ``dlbench.models.workloads.babi_rnn``)."""

from dlbench.models.layers import torch_layers


def build(torch, spec):
    """The Keras example's bAbI model (the Keras 2.2 variant without
    RepeatVector): story and question each embedded and encoded by an LSTM,
    the two encodings concatenated, a softmax over the vocabulary."""
    nn = torch.nn

    def encoder():
        return nn.Sequential(
            nn.Embedding(spec["vocabulary"], 50),
            torch_layers.last(torch, nn.LSTM(50, 100, batch_first=True)),
        )

    return torch_layers.recurrent(
        torch_layers.story_question(torch, encoder(), encoder(), nn.Linear(200, spec["classes"])),
        nn,
    )
