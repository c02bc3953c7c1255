"""imdb / imdb_gru: DeepLearningFrameworks' IMDB GRU.

Max length 150, vocabulary 30,000, Embedding 125 -> GRU 100 (cuDNN kernel where the backend has
one) -> Dense 2 softmax; Adam lr 0.001, betas 0.9/0.999, epsilon 1e-8; batch 64; 3 epochs.
Published: training seconds, and whether the cuDNN kernel was used.
"""

INPUTS = ("words150",)
PARAMETERS = 3818302
# Its names in the published comparisons (workflow/resources/published_results.csv).
PUBLISHED_AS = ("imdb_gru",)


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    (length,) = spec["input_shape"]
    return [flops.recurrent("gru", length, 125, 100), flops.dense(100, spec["classes"])]
