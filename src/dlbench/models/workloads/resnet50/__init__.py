"""imagenet_synthetic / resnet50 (inference): DeepLearningFrameworks' ResNet-50 features.

Keras' ResNet50(include_top=False, pooling="avg"): global average pooling to 2,048 features;
batch 64; published as seconds per 1,000 images. Random weights: they do not change the speed.
"""

INPUTS = ("image224",)
PARAMETERS = 23587712
# Without its classifier: 2,048 pooled features per image (no softmax).
OUTPUTS = 2048
# Its names in the published comparisons (workflow/resources/published_results.csv).
PUBLISHED_AS = ("resnet50_features",)


def flop_layers(spec):
    """Keras' ResNet50 v1 (stride on each stack's first 1x1 convolution)
    without its classifier."""
    from dlbench.models import flops

    stack = flops.Activations(spec["input_shape"]).conv(64, 7, stride=2, padding=3)
    stack.pool(3, stride=2, padding=1)
    for filters, blocks, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for block in range(blocks):
            step = stride if block == 0 else 1
            if block == 0:
                stack.shortcut(4 * filters, step)
            stack.conv(filters, 1, step).conv(filters, 3, padding=1).conv(4 * filters, 1)
    return stack.layers
