"""The numerical equivalence check: does every backend take the same
training steps?

A check run (task ``check``, run by the harness in the backend's own
environment) builds the workload without dropout, loads the shared initial
weights and takes ``check_steps`` optimizer steps on the first batches of the
shared data order. Before the first step and after every step it records
the loss on a fixed evaluation batch (the first ``CHECK_SAMPLES`` test
samples): the same weights and the same batches give the same curve in
every framework, up to float32 rounding, unless a framework computes
something else (an optimizer default, a missing bias, an epsilon in another
place).

This module is the run's side, in the backend's environment; the
comparison of the curves and of inference outputs across backends is
dlbench.analysis.equivalence_verdicts, in the workflow's. Importable on Python 3.6.
"""

from dlbench.models import layers

CHECK_SAMPLES = 256
# float32 rounding of the same computation in another order; see compare().
TOLERANCE = 2e-4


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


def check_steps(spec, adapter, data, step_log, load_weights):
    """The curve of one backend: the evaluation loss before the first step
    and after each of ``spec["check_steps"]`` steps, with each step's
    training loss as its framework reports it."""
    from dlbench.run import run_data

    hyper = spec["hyper"]
    batch_size = hyper["batch_size"]
    steps = spec["check_steps"]
    layers.set_dropout(False)
    model = adapter.build(spec["model"], data["meta"], hyper)
    weights = load_weights(spec, adapter, model)
    x_train, y_train = data["x_train"], data["y_train_onehot"]
    order = first_batches(spec["seed"], len(y_train), steps * batch_size)
    x_eval = run_data.take(data["x_test"], slice(0, CHECK_SAMPLES))
    y_eval = data["y_test_onehot"][:CHECK_SAMPLES]

    def evaluation_loss():
        return float(adapter.evaluate(model, x_eval, y_eval, len(y_eval))[0])

    losses, batch_losses = [evaluation_loss()], [None]
    step_log.add({"step": 0, "loss": losses[0], "batch_loss": None})
    for step in range(steps):
        rows = order[step * batch_size : (step + 1) * batch_size]
        result = adapter.train_epoch(model, run_data.take(x_train, rows), y_train[rows], batch_size)
        losses.append(evaluation_loss())
        batch_losses.append(float(result["loss"]))
        step_log.add({"step": step + 1, "loss": losses[-1], "batch_loss": batch_losses[-1]})
    print(
        "check: {} steps of {} on {}: evaluation loss {:.6f} -> {:.6f}".format(
            steps, batch_size, spec["backend"], losses[0], losses[-1]
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
            "losses": losses,
            "batch_losses": batch_losses,
        },
    }


STEP_COLUMNS = ("step", "loss", "batch_loss")
