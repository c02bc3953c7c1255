"""lenet in cuDNN and cuBLAS, called directly (the workload:
``dlbench.models.workloads.lenet``): the lowest level of the cuDNN /
TensorFlow / Keras latency comparison."""

from dlbench.models.layers import cudnn_layers


def build(gpu, spec):
    """No activation on the convolutions, as in Caffe's LeNet. ``gpu``
    holds the loaded libraries, CuPy (device memory only) and the handles.
    Returns the layers (with their weights) and the forward pass, which
    takes an NCHW float32 batch on the device and returns class
    probabilities there."""
    libraries, cupy, handles = gpu.libraries, gpu.cupy, gpu.handles
    channels = spec["input_shape"][2]
    height, width = spec["input_shape"][:2]
    flat = 50 * ((((height - 4) // 2) - 4) // 2) * ((((width - 4) // 2) - 4) // 2)
    conv1 = cudnn_layers.Convolution(libraries, cupy, channels, 20, 5)
    conv2 = cudnn_layers.Convolution(libraries, cupy, 20, 50, 5)
    pool = cudnn_layers.MaxPool(libraries, cupy, 2)
    dense1 = cudnn_layers.Dense(libraries, cupy, flat, 500, relu=True)
    dense2 = cudnn_layers.Dense(libraries, cupy, 500, spec["classes"])
    softmax = cudnn_layers.Softmax(libraries, cupy)

    def forward(x):
        x = pool(handles.cudnn, conv1(handles.cudnn, x))
        x = pool(handles.cudnn, conv2(handles.cudnn, x))
        x = dense2(handles, dense1(handles, x))
        return softmax(handles.cudnn, x)

    return [conv1, conv2, dense1, dense2], forward
