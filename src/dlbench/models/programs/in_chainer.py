"""Training and inference in Chainer, as its tutorials write them:
``optimizer.update`` with the loss function (it clears the gradients,
back-propagates and updates) in train mode; the softmax of the network
under ``no_backprop_mode`` for one batch."""

import numpy

TRAINING = ("train_epoch",)
INFERENCE = ("predict",)


def train_epoch(chainer, forward, optimizer, batches, after_step=None):
    """One epoch over ``batches`` ((inputs, class indices) arrays): the
    summed loss and correct predictions. ``forward`` is the network, or what
    runs it in mixed precision."""
    F = chainer.functions
    total_loss, correct = 0.0, 0
    found = {}

    def loss_of(x, y):
        found["logits"] = forward(x)
        found["loss"] = F.softmax_cross_entropy(found["logits"], y)
        return found["loss"]

    with chainer.using_config("train", True):
        for x, y in batches:
            optimizer.update(loss_of, x, y)
            total_loss += float(found["loss"].array) * len(y)
            correct += int((numpy.asarray(found["logits"].array).argmax(axis=1) == y).sum())
            if after_step is not None:
                after_step()
    return total_loss, correct


def predict(chainer, forward, x):
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        return numpy.asarray(chainer.functions.softmax(forward(x)).array)
