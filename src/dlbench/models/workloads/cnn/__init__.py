"""mnist / cnn: the Keras 2 example mnist_cnn.py (the 2017 backend comparison).

Conv2D 32 3x3 relu -> Conv2D 64 3x3 relu -> MaxPool 2x2 -> Dropout 0.25 -> Flatten -> Dense 128
relu -> Dropout 0.5 -> Dense 10 softmax; Adadelta as in Keras 2 (lr 1.0, rho 0.95); batch 128;
12 epochs.
"""

INPUTS = ("image28",)
PARAMETERS = 1199882


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    stack = flops.Activations(spec["input_shape"]).conv(32, 3).conv(64, 3).pool(2)
    return stack.dense(128).dense(spec["classes"]).layers
