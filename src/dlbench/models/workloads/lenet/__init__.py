"""mnist / lenet (inference): the cuDNN / TensorFlow / Keras latency comparison.

Conv 20 5x5 -> MaxPool 2 -> Conv 50 5x5 -> MaxPool 2 -> Dense 500 relu -> Dense 10 softmax.
Latency of one image (batch 1): p50/p90/p99 after warm-up; lines of code per implementation.
"""

INPUTS = ("image28",)
PARAMETERS = 431080


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    stack = flops.Activations(spec["input_shape"]).conv(20, 5).pool(2).conv(50, 5).pool(2)
    return stack.dense(500).dense(spec["classes"]).layers
