"""cifar10 / cifar_cnn: the Keras 2 example cifar10_cnn.py (no augmentation).

Conv 32 3x3 same relu -> Conv 32 3x3 relu -> MaxPool -> Dropout 0.25 -> Conv 64 3x3 same relu ->
Conv 64 3x3 relu -> MaxPool -> Dropout 0.25 -> Flatten -> Dense 512 relu -> Dropout 0.5 -> Dense 10
softmax; RMSprop lr 1e-4 (decay 1e-6); batch 32; the example's 100 epochs are the config's choice.
"""

INPUTS = ("image32",)
PARAMETERS = 1250858


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    stack = flops.Activations(spec["input_shape"])
    stack.conv(32, 3, padding=1).conv(32, 3).pool(2).conv(64, 3, padding=1).conv(64, 3).pool(2)
    return stack.dense(512).dense(spec["classes"]).layers
