"""Training and inference in MXNet Gluon, as its tutorials write them: the
loss recorded under ``autograd.record``, ``backward``, the Trainer's step;
the network's softmax for one batch."""

TRAINING = ("loss_function", "train_epoch")
INFERENCE = ("predict",)


def loss_function(mx):
    return mx.gluon.loss.SoftmaxCrossEntropyLoss()


def train_epoch(mx, forward, trainer, loss_of, batches, after_step=None):
    """One epoch over ``batches`` ((inputs, class indices) NDArrays):
    the summed loss and correct predictions (NDArrays). ``forward`` is the
    network, or what runs it in mixed precision."""
    total_loss, correct = mx.nd.zeros(1), mx.nd.zeros(1)
    for x, y in batches:
        with mx.autograd.record():
            logits = forward(x)
            loss = loss_of(logits, y)
        loss.backward()
        trainer.step(y.shape[0])  # the gradient of the batch's mean loss
        total_loss += loss.sum()
        correct += (logits.argmax(axis=1) == y).sum()
        if after_step is not None:
            after_step()
    return total_loss, correct


def predict(mx, forward, x):
    return mx.nd.softmax(forward(x))
