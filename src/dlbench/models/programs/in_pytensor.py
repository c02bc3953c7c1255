"""Training and inference in PyTensor (Theano's successor), as Theano's
tutorials write them: the layers applied in turn to a symbolic input, the
mean cross-entropy, ``pytensor.grad`` and the optimizer's updates compiled
into one ``pytensor.function`` called per batch; a compiled softmax of the
forward pass for one batch."""

TRAINING = ("train_function", "train_epoch")
INFERENCE = ("predict_function",)


def forward(layers, x, training):
    """The workload's layers applied in turn (``training``: dropout on)."""
    for layer in layers:
        x = layer(x, training)
    return x


def loss_and_hits(pt, logits, labels):
    """Mean cross-entropy of the softmax (log_softmax picked at the label)
    and the number of argmax matches."""
    rows = pt.arange(labels.shape[0])
    loss = -pt.mean(pt.special.log_softmax(logits, axis=1)[rows, labels])
    return loss, pt.sum(pt.eq(pt.argmax(logits, axis=1), labels))


def train_function(pytensor, layers, params, updates):
    """The compiled training step of a batch (NCHW images, class indices):
    its loss and correct predictions, the parameters updated by
    ``updates(gradients)`` (the optimizer's)."""
    pt = pytensor.tensor
    x, labels = pt.tensor4("x", dtype="float32"), pt.ivector("labels")
    loss, hits = loss_and_hits(pt, forward(layers, x, True), labels)
    gradients = pytensor.grad(loss, params)
    return pytensor.function([x, labels], [loss, hits], updates=updates(gradients))


def train_epoch(train, batches, after_step=None):
    """One epoch of ``train`` over ``batches``: the summed loss and correct
    predictions."""
    total_loss, correct = 0.0, 0
    for x, y in batches:
        loss, hits = train(x, y)
        total_loss += float(loss) * len(y)
        correct += int(hits)
        if after_step is not None:
            after_step()
    return total_loss, correct


def predict_function(pytensor, layers, compile_function=None):
    """The compiled inference call: the softmax of the forward pass
    (``compile_function``: pytensor.function, or what compiles it later)."""
    pt = pytensor.tensor
    x = pt.tensor4("x", dtype="float32")
    probabilities = pt.special.softmax(forward(layers, x, False), axis=1)
    return (compile_function or pytensor.function)([x], probabilities)
