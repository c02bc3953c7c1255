"""cifar_cnn in Keras (the workload: ``dlbench.models.workloads.cifar_cnn``)."""

from dlbench.models.layers import keras_layers


def build(keras, spec):
    layers = keras.layers
    return keras_layers.sequential(
        keras,
        "cifar_cnn",
        spec["input_shape"],
        layers.Conv2D(32, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(32, (3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Dropout(0.25),
        layers.Conv2D(64, (3, 3), padding="same", activation="relu"),
        layers.Conv2D(64, (3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Dropout(0.25),
        layers.Flatten(),
        layers.Dense(512, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(spec["classes"], activation="softmax"),
    )
