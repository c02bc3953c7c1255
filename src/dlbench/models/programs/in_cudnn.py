"""Inference with cuDNN and cuBLAS called directly: the batch copied to the
device, the workload's forward pass (its calls, one by one), the
probabilities copied back, as a C++ program would write it."""

TRAINING = ()
INFERENCE = ("predict",)


def predict(cupy, forward, x):
    """Class probabilities of one NCHW float32 batch, on the host."""
    outputs = forward(cupy.asarray(x))
    return cupy.asnumpy(outputs.reshape(outputs.shape[0], -1))
