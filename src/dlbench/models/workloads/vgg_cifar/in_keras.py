"""vgg_cifar in Keras (the workload: ``dlbench.models.workloads.vgg_cifar``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    """The VGG-style CNN of the DeepLearningFrameworks comparison."""
    layers = keras.layers
    return keras_layers.sequential(
        keras,
        "vgg_cifar",
        spec["input_shape"],
        layers.Conv2D(50, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(50, (3, 3), padding="same", activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2)),
        layers.Dropout(0.25),
        layers.Conv2D(100, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(100, (3, 3), padding="same", activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(2, 2)),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(spec["classes"], activation="softmax"),
    )
