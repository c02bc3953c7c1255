"""Training and inference in CNTK's Python API, as its tutorials write them:
the cross-entropy and classification error of the network's output, a
``Trainer`` over them and the learner, ``train_minibatch`` per batch; the
softmax node evaluated on one batch."""

TRAINING = ("criteria", "trainer", "train_epoch")
INFERENCE = ("probabilities", "predict")


def criteria(C, logits, labels):
    """The loss and the evaluation metric of the network's output."""
    return C.cross_entropy_with_softmax(logits, labels), C.classification_error(logits, labels)


def trainer(C, logits, criteria, learner):
    return C.Trainer(logits, criteria, [learner])


def train_epoch(trainer, features, labels, batches, after_step=None):
    """One epoch over ``batches`` ((inputs, one-hot labels, samples) arrays
    fed to the ``features`` and ``labels`` inputs): the summed loss and
    errors (host values)."""
    total_loss = total_error = 0.0
    for x, y, count in batches:
        trainer.train_minibatch({features: x, labels: y})
        total_loss += trainer.previous_minibatch_loss_average * count
        total_error += trainer.previous_minibatch_evaluation_average * count
        if after_step is not None:
            after_step()
    return total_loss, total_error


def probabilities(C, logits):
    return C.softmax(logits)


def predict(probabilities, features, x):
    return probabilities.eval({features: x})
