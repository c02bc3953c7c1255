"""mnist / mlp: the Keras 2 example mnist_mlp.py (the 2017 backend comparison).

Dense 512 relu (input 784) -> Dropout 0.2 -> Dense 512 relu -> Dropout 0.2 -> Dense 10 softmax;
RMSprop (lr 0.001, rho 0.9, epsilon 1e-7); categorical cross-entropy; batch 128; 20 epochs.
"""

INPUTS = ("image28",)
PARAMETERS = 669706
# Its names in the published comparisons (workflow/resources/published_results.csv).
PUBLISHED_AS = ("mnist_mlp",)


def flop_layers(spec):
    """The layers whose matrix products count (dlbench.models.flops)."""
    from dlbench.models import flops

    return (
        flops.Activations(spec["input_shape"]).dense(512).dense(512).dense(spec["classes"]).layers
    )
