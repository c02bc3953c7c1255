"""Training and inference in plain JAX, as its documentation writes them:
a pure forward function over a parameter pytree, the loss's
``jax.value_and_grad``, optax's update, the whole step under ``jax.jit``
(parameters and optimizer state donated); ``jax.jit`` of the forward pass
and its softmax for one batch."""

TRAINING = ("train_step", "train_epoch")
INFERENCE = ("predict",)


def sums(optax, forward, params, x, y, key=None):
    """The batch's summed cross-entropy and correct predictions (``y``
    one-hot; ``key``: dropout's, None in inference)."""
    logits = forward(params, x, key)
    loss = optax.softmax_cross_entropy(logits, y).sum()
    return loss, (logits.argmax(axis=1) == y.argmax(axis=1)).sum()


def train_step(jax, optax, forward, optimizer, loss_scale=None, **jit_options):
    """The compiled step: gradients of the batch's mean loss, the optax
    update, the epoch's running loss and correct sums, a fresh dropout key
    per step. ``loss_scale(state)`` multiplies the loss where mixed precision
    scales it; ``jit_options`` place the outputs (a device mesh's sharding)."""

    def step(params, state, totals, x, y, key, index):
        key = jax.random.fold_in(key, index)

        def mean_loss(params):
            loss, correct = sums(optax, forward, params, x, y, key)
            mean = loss / y.shape[0]
            return (mean if loss_scale is None else mean * loss_scale(state)), (loss, correct)

        (_, (loss, correct)), grads = jax.value_and_grad(mean_loss, has_aux=True)(params)
        updates, state = optimizer.update(grads, state, params)
        totals = (totals[0] + loss, totals[1] + correct)
        return optax.apply_updates(params, updates), state, totals

    return jax.jit(step, donate_argnums=(0, 1), **jit_options)


def train_epoch(step, params, state, totals, batches, key, index, after_step=None):
    """One epoch of ``step`` over ``batches`` (on the device), the steps
    counted from ``index``: the parameters, the optimizer's state and the
    running (loss, correct) sums after it."""
    for x, y in batches:
        params, state, totals = step(params, state, totals, x, y, key, index)
        index += 1
        if after_step is not None:
            after_step(totals)
    return params, state, totals


def predict(jax, forward, output):
    """The compiled inference call: ``output`` (softmax, or nothing where
    the model ends in features) of the forward pass."""
    return jax.jit(lambda params, x: output(forward(params, x)))
