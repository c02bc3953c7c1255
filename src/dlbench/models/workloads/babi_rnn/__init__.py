"""babi / babi_rnn: the Keras 2.2 example babi_rnn.py (QA2 two supporting facts, 1k).

Story and question each Embedding 50 -> LSTM 100; concatenated -> Dense(vocabulary) softmax (the
variant without RepeatVector); Adam; batch 32; 20 epochs; 5 % validation split. Its parameter
count depends on the vocabulary V of its data: 301 V + 120,800.
"""

INPUTS = ("story_question",)
PARAMETERS = None  # from the data: parameters(meta)
# Its names in the published comparisons (workflow/resources/published_results.csv).
PUBLISHED_AS = ("babi_rnn",)


def parameters(meta):
    """Two embeddings of 50, two LSTMs of 100, a softmax over the vocabulary V."""
    return 301 * meta["vocabulary"] + 120800


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    return [
        flops.recurrent("lstm", spec["story_length"], 50, 100),
        flops.recurrent("lstm", spec["query_length"], 50, 100),
        flops.dense(2 * 100, spec["classes"]),
    ]
