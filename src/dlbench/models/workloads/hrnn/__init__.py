"""mnist / hrnn: the Keras 2 example mnist_hierarchical_rnn.py.

Input 28x28x1 -> TimeDistributed(LSTM 128) over the rows -> LSTM 128 -> Dense 10 softmax; RMSprop;
batch 32; 5 epochs.
"""

INPUTS = ("image28",)
PARAMETERS = 199434
# Its names in the published comparisons (workflow/resources/published_results.csv).
PUBLISHED_AS = ("mnist_hrnn",)
# Backends whose framework computes it wrongly or not at all, with what was
# measured (with the shared initial weights: tests/e2e/test_parity.py).
CANNOT_RUN = {
    "keras-mxnet": "keras-mxnet 2.2.4.3 on MXNet 1.9: an LSTM inside TimeDistributed returns "
    "zeros through MXNet's loop over time, and unrolled it does not bind (dot shape error)",
}


def flop_layers(spec):
    """An LSTM over each row of pixels, an LSTM over the row encodings."""
    from dlbench.models import flops

    height, width, channels = spec["input_shape"]
    return [
        flops.recurrent("lstm", width, channels, 128, sequences=height, on_data=True),
        flops.recurrent("lstm", height, 128, 128),
        flops.dense(128, spec["classes"]),
    ]
