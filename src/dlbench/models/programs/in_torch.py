"""Training and inference in plain PyTorch, the loop of its tutorials:
zero the gradients, the forward pass, the cross-entropy, backward, the
optimizer's step; ``model(x)`` under ``torch.inference_mode`` for one batch."""

TRAINING = ("train_epoch",)
INFERENCE = ("predict",)


def update(loss, optimizer):
    """Back-propagate the loss and step the optimizer."""
    loss.backward()
    optimizer.step()


def train_epoch(torch, forward, optimizer, batches, after_step=None, step=update):
    """One epoch over ``batches`` ((inputs, class indices) on the device):
    the summed loss and correct predictions, as tensors. ``forward`` is the
    network (or what runs it: compiled, distributed, in mixed precision);
    ``step`` replaces ``update`` where mixed precision scales the loss."""
    total_loss, correct = 0, 0
    for x, y in batches:
        optimizer.zero_grad(set_to_none=True)
        logits = forward(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        step(loss, optimizer)
        total_loss += loss.detach() * len(y)
        correct += (logits.detach().argmax(dim=1) == y).sum()
        if after_step is not None:
            after_step(loss)
    return total_loss, correct


def predict(torch, net, x, softmax=True):
    """Class probabilities of one batch (the features where the model ends
    in them: ``softmax`` False); ``net`` is in eval mode."""
    with torch.inference_mode():
        outputs = net(x)
        return torch.softmax(outputs, dim=1) if softmax else outputs
