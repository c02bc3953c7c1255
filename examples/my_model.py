"""A Keras model of your own, for config/questions/own-model.yaml: put your
layers here (or name your own file in the config). The workflow calls
``build(keras, spec)`` with the run's Keras module and the dataset's spec
(``input_shape``, ``classes``) and compiles the model with the workload's
optimizer and loss; end it in a softmax over the classes."""


def build(keras, spec):
    layers = keras.layers
    return keras.Sequential(
        [
            keras.Input(shape=tuple(spec["input_shape"])),
            layers.Conv2D(16, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(32, 3, activation="relu"),
            layers.MaxPooling2D(),
            layers.Flatten(),
            layers.Dense(64, activation="relu"),
            layers.Dense(spec["classes"], activation="softmax"),
        ]
    )
