"""lenet in Keras (the workload: ``dlbench.models.workloads.lenet``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    """LeNet as in the cuDNN/TensorFlow/Keras latency comparison (no
    activation on the convolutions, as in Caffe's LeNet)."""
    layers = keras.layers
    return keras_layers.sequential(
        keras,
        "lenet",
        spec["input_shape"],
        layers.Conv2D(20, (5, 5)),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(50, (5, 5)),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dense(500, activation="relu"),
        layers.Dense(spec["classes"], activation="softmax"),
    )
