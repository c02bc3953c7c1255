"""The numerical equivalence check: does every backend take the same
training steps, and draw the same dropout?

A check run (task ``check``, run by the harness in the backend's own
environment) builds the workload without dropout, loads the shared initial
weights and takes ``check_steps`` optimizer steps on the first batches of the
shared data order. Before the first step and after every step it records
the loss on a fixed evaluation batch (the first ``CHECK_SAMPLES`` test
samples): the same weights and the same batches give the same curve in
every framework, up to float32 rounding, unless a framework computes
something else (an optimizer default, a missing bias, an epsilon in another
place).

The steps run under settings that make the frameworks' documented rule
differences vanish, the same on every backend (``check_settings``): RMSprop's
epsilon, which frameworks add in different places, and the
float inputs, which get a small seeded jitter so that no pre-activation is
exactly 0 and no pooling window holds tied maxima. What a backend still
computes differently is then a departure.

Before the steps it builds the workload again with its dropout and draws
``DROPOUT_DRAWS`` training-mode forward passes from the same weights on the
first ``DROPOUT_SAMPLES`` evaluation samples (``dropout_draws``; FIRST_DRAWS
where those are all the same: no dropout): two statistics per draw, which
the analysis compares across backends.

This module is the run's side, in the backend's environment; the
comparison of the curves across backends is dlbench.analysis.equivalence_steps,
of inference outputs dlbench.analysis.equivalence_predictions, in the
workflow's. Importable on Python 3.6.
"""

from dlbench.models import layers

CHECK_SAMPLES = 256

# RMSprop's epsilon goes under the square root (Keras 3, optax with
# eps_in_sqrt, MXNet, Chainer, PyTensor) or after it (torch.optim, Keras 2).
# In the check every backend runs it at CHECK_EPSILON, where it is added then
# changes no step beyond float32 rounding. Measured on the digits MLP, native
# torch against Keras 3 on torch after 4 steps: 2.3e-3 apart at 1e-20 and
# 1.1e-3 at 1e-12 (gradients of 1e-10 to 1e-15 take a whole step by one rule
# and a part of one by the other), 9e-8 at 1e-30, as Keras 3 on JAX against
# Keras 3 on torch.
# Adam keeps the workload's epsilon: Keras adds it beside sqrt(v), torch.optim
# and optax beside the bias-corrected sqrt(v_hat), which moves only the steps
# of gradients of epsilon's size (their share of the loss is of the order of
# epsilon times the learning rate) and leaves the curve within the tolerance:
# measured on imdb_gru (epsilon 1e-8), native torch and native JAX 1.1e-5
# from Keras 3 after 4 steps, the Keras 3 backends 9e-8 apart. At 1e-30 every
# gradient rounding left nonzero would take a whole step of the learning
# rate, in a direction float32 rounding picks: the Keras 3 backends, which
# share the rule, were 1.5e-3 apart there.
# Adadelta is left alone: its epsilon sets its step size (sqrt(eps) / sqrt(v)
# on the first step) and every framework adds it in the same place.
CHECK_EPSILON = 1e-30
EPSILON_OPTIMIZERS = ("rmsprop",)
# The float inputs' jitter, uniform in +-INPUT_JITTER, one array drawn from
# the run's seed (the same on every backend). The digits are upsampled (each
# pixel 3x3) on a black background: without it a convolution of an empty
# patch is exactly 0 (Theano's ReLU gradient there is 0.5, the others' 0) and
# a 2x2 pooling window holds equal maxima (Theano and PyTensor send the
# gradient to each, the others to one). 1e-3 puts tied values about 1e-4
# apart, a thousand times what float32 rounding moves them.
INPUT_JITTER = 1e-3

# The dropout check: training-mode forward passes of the workload with its
# dropout, each a fresh draw, from the shared weights on a fixed batch.
DROPOUT_DRAWS = 200
DROPOUT_SAMPLES = 32
# Drawn first: where these are all the same the pass is deterministic (no
# dropout) and the rest are not drawn (200 eager passes of Keras 3 on
# TensorFlow's imdb_gru, which has no dropout, took most of its check's two
# minutes).
FIRST_DRAWS = 10
# A backend whose draws are all within this of each other (relative to the
# largest output) drew no dropout: its training-mode forward pass is
# deterministic.
DETERMINISTIC = 1e-6


def first_batches(seed, n_train, samples):
    """The first ``samples`` of the shared data order, into the next epochs'
    orders where one epoch has fewer."""
    import numpy

    from dlbench.run import run_data

    orders, epoch = [], 0
    while sum(len(order) for order in orders) < samples:
        orders.append(run_data.epoch_order(seed, epoch, n_train))
        epoch += 1
    return numpy.concatenate(orders)[:samples]


def check_hyper(hyper):
    """The workload's hyper-parameters as the check runs them, and what it
    changed: the optimizer's epsilon at CHECK_EPSILON where frameworks add
    it in different places."""
    optimizer = dict(hyper["optimizer"])
    changed = {}
    if optimizer["name"] in EPSILON_OPTIMIZERS:
        changed["optimizer_epsilon"] = {"asked": optimizer.get("epsilon"), "ran": CHECK_EPSILON}
        optimizer["epsilon"] = CHECK_EPSILON
    return dict(hyper, optimizer=optimizer), changed


def jittered(x, seed):
    """``x`` (one array or a dict of named arrays) with every float array
    moved by a seeded uniform jitter of INPUT_JITTER; integer inputs (word
    ids) as they are. The same draw on every backend: numpy's RandomState is
    the same generator in every environment."""
    import numpy

    if isinstance(x, dict):
        return {
            name: jittered(array, seed + index)
            for index, (name, array) in enumerate(sorted(x.items()))
        }
    if not numpy.issubdtype(x.dtype, numpy.floating):
        return x
    noise = numpy.random.RandomState(seed).uniform(-INPUT_JITTER, INPUT_JITTER, x.shape)
    return (x + noise).astype(x.dtype)


def draw_statistics(draws, inference):
    """Per draw of the training-mode outputs (draws, samples, outputs) against
    the inference-mode outputs of the same samples: ``squared``, the mean
    squared difference, which dropout's rate sets; ``shift``, the mean
    difference at each sample's most likely output under inference, which
    dropout that is not inverted (or a scale of its own) moves; and whether
    the draws differ from each other at all."""
    import numpy

    inference = numpy.asarray(inference, dtype="float64")
    inference = inference.reshape(len(inference), -1)  # outputs of any shape, per sample
    draws = numpy.asarray(draws, dtype="float64").reshape((-1,) + inference.shape)
    difference = draws - inference[None]
    top = inference.argmax(axis=1)
    rows = numpy.arange(len(top))
    scale = float(numpy.max(numpy.abs(inference))) or 1.0
    spread = float(numpy.max(numpy.abs(draws - draws[:1]))) / scale
    return {
        "squared": [float(v) for v in numpy.mean(difference**2, axis=(1, 2))],
        "shift": [float(v) for v in difference[:, rows, top].mean(axis=1)],
        "spread": spread,
        "stochastic": spread > DETERMINISTIC,
    }


def dropout_draws(spec, adapter, data, load_weights):
    """The dropout check's side in the backend: the workload of ``spec`` (a
    check run's RunSpec) built with its dropout, the shared weights loaded
    (``load_weights``: shared_weights.load_initial_weights), one
    inference-mode pass and DROPOUT_DRAWS training-mode passes on the first
    DROPOUT_SAMPLES evaluation samples, as statistics per draw
    (``draw_statistics``); or why there are none."""
    import numpy

    from dlbench.run import run_data

    found = {"draws": DROPOUT_DRAWS, "samples": DROPOUT_SAMPLES}
    training_outputs = adapter.training_outputs  # None: no training-mode forward pass
    if training_outputs is None:
        found["reason"] = "n/a: {} has no training-mode forward pass here".format(spec.backend)
        return found
    # built for inference (no optimizer): the draws train nothing
    hyper = {key: value for key, value in spec.hyper.items() if key != "optimizer"}
    layers.set_dropout(True)
    try:
        model = adapter.build(spec.model, data["meta"], hyper)
        weights = load_weights(spec, adapter, model)
        if weights is not None and not weights.get("loaded"):
            found["reason"] = "own initial weights ({})".format(weights.get("reason"))
            return found
        x = run_data.take(data["x_test"], slice(0, DROPOUT_SAMPLES))
        inference = adapter.predict(model, x)
        outputs = numpy.asarray(training_outputs(model, x, FIRST_DRAWS))
        found.update(draw_statistics(outputs, inference))
        if found["stochastic"]:
            rest = training_outputs(model, x, DROPOUT_DRAWS - FIRST_DRAWS)
            outputs = numpy.concatenate([outputs, numpy.asarray(rest)])
            found.update(draw_statistics(outputs, inference))
        found["draws"] = len(found["squared"])
    except Exception as error:  # the steps are checked all the same; the table says why
        found["reason"] = "failed: {}: {}".format(type(error).__name__, error)
        print("check: dropout draws " + found["reason"], flush=True)
        return found
    finally:
        layers.set_dropout(False)
    print(
        "check: {} training-mode draws on {}: mean squared difference from inference {:.3e}".format(
            found["draws"], spec.backend, sum(found["squared"]) / found["draws"]
        ),
        flush=True,
    )
    return found


def check_steps(spec, adapter, data, step_log, load_weights):
    """The curve of one backend: the evaluation loss before the first step
    and after each of the RunSpec's ``check_steps`` steps, with each step's
    training loss as its framework reports it, under the check's settings
    (``check_hyper``, ``jittered``); and its dropout draws."""
    from dlbench.run import run_data

    dropout = dropout_draws(spec, adapter, data, load_weights)
    hyper, changed = check_hyper(spec.hyper)
    batch_size = hyper["batch_size"]
    steps = spec.check_steps
    layers.set_dropout(False)
    model = adapter.build(spec.model, data["meta"], hyper)
    # what a framework cannot run under the check's settings as built
    prepare = adapter.prepare_check
    if prepare is not None:
        changed.update(prepare(model, hyper))
    weights = load_weights(spec, adapter, model)
    x_train, y_train = data["x_train"], data["y_train_onehot"]
    order = first_batches(spec.seed, len(y_train), steps * batch_size)
    x_steps = jittered(run_data.take(x_train, order), spec.seed)
    x_eval = jittered(run_data.take(data["x_test"], slice(0, CHECK_SAMPLES)), spec.seed + 1)
    y_eval = data["y_test_onehot"][:CHECK_SAMPLES]
    changed["input_jitter"] = INPUT_JITTER

    def evaluation_loss():
        return float(adapter.evaluate(model, x_eval, y_eval, len(y_eval))[0])

    losses, batch_losses = [evaluation_loss()], [None]
    step_log.add({"step": 0, "loss": losses[0], "batch_loss": None})
    for step in range(steps):
        rows = slice(step * batch_size, (step + 1) * batch_size)
        result = adapter.train_epoch(
            model, run_data.take(x_steps, rows), y_train[order[rows]], batch_size
        )
        losses.append(evaluation_loss())
        batch_losses.append(float(result["loss"]))
        step_log.add({"step": step + 1, "loss": losses[-1], "batch_loss": batch_losses[-1]})
    print(
        "check: {} steps of {} on {}: evaluation loss {:.6f} -> {:.6f}".format(
            steps, batch_size, spec.backend, losses[0], losses[-1]
        ),
        flush=True,
    )
    return {
        "parameters": adapter.parameter_count(model),
        "initial_weights": weights,
        "check": {
            "steps": steps,
            "batch_size": batch_size,
            "evaluation_samples": len(y_eval),
            "dropout": False,
            "settings": changed,
            "losses": losses,
            "batch_losses": batch_losses,
            "dropout_draws": dropout,
        },
    }


STEP_COLUMNS = ("step", "loss", "batch_loss")
