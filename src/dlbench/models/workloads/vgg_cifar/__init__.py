"""cifar10 / vgg_cifar: DeepLearningFrameworks' CIFAR-10 CNN (published as cifar10_cnn).

Conv 50 3x3 same relu x2 -> MaxPool 2 stride 2 -> Dropout 0.25 -> Conv 100 3x3 same relu x2 ->
MaxPool -> Dropout 0.25 -> Flatten -> Dense 512 relu -> Dropout 0.5 -> Dense 10; SGD lr 0.01
momentum 0.9; batch 64; 10 epochs. Published: training seconds for 10 epochs.
"""

INPUTS = ("image32",)
PARAMETERS = 3441592
# Its names in the published comparisons (workflow/resources/published_results.csv).
PUBLISHED_AS = ("cifar10_cnn",)


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    stack = flops.Activations(spec["input_shape"])
    stack.conv(50, 3, padding=1).conv(50, 3, padding=1).pool(2)
    stack.conv(100, 3, padding=1).conv(100, 3, padding=1).pool(2)
    return stack.dense(512).dense(spec["classes"]).layers
