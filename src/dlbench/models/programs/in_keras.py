"""Training and inference in Keras, Keras 3 and Keras 2 alike: ``compile``
and ``fit`` for an epoch, ``predict_on_batch`` for one batch (Keras'
documented call for a batch: the compiled predict step without
``predict``'s per-call data pipeline)."""

# What the lines of code count (dlbench.models.lines): the functions a task
# calls and everything of this module they call.
TRAINING = ("compile_model", "train_epoch")
INFERENCE = ("predict",)


def compile_model(model, optimizer, loss, **options):
    """The loss, the optimizer and accuracy; ``options``: the backend's
    compile settings (Keras 3's jit_compile, keras-mxnet's context)."""
    model.compile(optimizer=optimizer, loss=loss, metrics=["accuracy"], **options)


def train_epoch(model, x, y, batch_size, callbacks=()):
    """One epoch of ``fit`` over the samples in the order given: its history
    (loss and accuracy)."""
    return model.fit(
        x, y, batch_size=batch_size, epochs=1, shuffle=False, verbose=0, callbacks=list(callbacks)
    ).history


def predict(model, x):
    return model.predict_on_batch(x)
