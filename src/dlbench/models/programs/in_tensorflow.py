"""Training and inference in TensorFlow's own API (no Keras): the workload's
module of variables and its forward pass, a ``tf.GradientTape`` step of the
cross-entropy compiled with ``tf.function``, an optimizer's ``apply``; the
compiled forward pass and its output for one batch."""

TRAINING = ("train_step", "train_epoch")
INFERENCE = ("predict",)


def train_step(tf, net, apply, jit_compile=None, all_reduce=None, loss_scale=None):
    """The compiled step: gradients of the batch's mean cross-entropy,
    applied by ``apply`` (the optimizer's); returns the batch's summed loss
    and correct predictions. ``all_reduce(count, gradients)`` sums them over
    data-parallel replicas; ``loss_scale()`` multiplies the loss where mixed
    precision scales it."""
    variables = net.trainable_variables

    def step(x, y):
        with tf.GradientTape() as tape:
            logits = net.forward(x, training=True)
            losses = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=logits)
            loss = tf.reduce_sum(losses)
            scaled = loss if loss_scale is None else loss * loss_scale()
        gradients = [tf.convert_to_tensor(g) for g in tape.gradient(scaled, variables)]
        count = tf.cast(tf.shape(y)[0], tf.float32)
        if all_reduce is not None:
            count, gradients = all_reduce(count, gradients)
        apply([gradient / count for gradient in gradients])
        hits = tf.equal(tf.argmax(logits, 1), tf.argmax(y, 1))
        return tf.stack([loss, tf.reduce_sum(tf.cast(hits, tf.float32))])

    return tf.function(step, jit_compile=jit_compile)


def train_epoch(tf, step, batches, after_step=None):
    """One epoch of ``step`` over ``batches``: the summed [loss, correct]."""
    sums = tf.zeros([2])
    for x, y in batches:
        sums += step(x, y)
        if after_step is not None:
            after_step(sums)
    return sums


def predict(tf, net, jit_compile=None):
    """The compiled inference call: the model's output (softmax, or the
    features) of the forward pass."""

    def call(x):
        return net.output(net.forward(x, training=False))

    return tf.function(call, jit_compile=jit_compile)
