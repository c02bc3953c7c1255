"""mnist / deep_mnist: TensorFlow's "Deep MNIST for Experts" tutorial CNN (the TensorFlow
CPU / GPU / cloud comparison).

Conv 5x5x32 same relu -> MaxPool 2 -> Conv 5x5x64 same relu -> MaxPool 2 -> Flatten -> Dense
1024 relu -> Dropout 0.5 -> Dense 10 softmax; Adam lr 1e-4; batch 50.
"""

INPUTS = ("image28",)
# 832 + 51,264 (convolutions) + 3,212,288 (7 x 7 x 64 -> 1024) + 10,250
PARAMETERS = 3274634


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    stack = flops.Activations(spec["input_shape"]).conv(32, 5, padding=2).pool(2)
    stack.conv(64, 5, padding=2).pool(2)
    return stack.dense(1024).dense(spec["classes"]).layers
