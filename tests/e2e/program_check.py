"""Run a backend's program (dlbench/models/programs/in_<family>.py) on a few
batches, through the backend's adapter as a timed run calls it, and report
which of the program's functions ran: the functions its ``TRAINING`` and
``INFERENCE`` name, each wrapped to count its calls before the adapter
builds the model. Trains the digits MLP for one epoch of three batches
(where the backend trains) and answers an inference call on two samples.
Runs inside a backend environment (Python 3.6 and later); prints JSON.

    python tests/e2e/program_check.py --backend native-torch --data results/data/digits.npz
"""

import argparse
import functools
import importlib
import json
import math

from dlbench import catalog
from dlbench.run import backends, launch, run_data

MODEL = "mlp"
BATCH = 32
BATCHES = 3
HYPER = {
    "batch_size": BATCH,
    "loss": "categorical_crossentropy",
    "optimizer": {"name": "sgd", "learning_rate": 0.01, "momentum": 0.0, "nesterov": False},
}


def counted(program, names, calls):
    """Wrap each function of ``names`` in ``program`` to count its calls."""

    def wrap(name, function):
        @functools.wraps(function)
        def call(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return function(*args, **kwargs)

        return call

    for name in names:
        setattr(program, name, wrap(name, getattr(program, name)))


def check(backend, data_file, settings):
    family = catalog.BACKENDS[backend]["family"]
    program = importlib.import_module("dlbench.models.programs.in_" + family)
    trains = catalog.BACKENDS[backend].task_not_applicable("train") is None
    calls = {}
    counted(program, set(program.TRAINING) | set(program.INFERENCE), calls)
    adapter = backends.adapter_for(backend, settings)
    adapter.setup(threads=1, seed=0, devices=0, parallel=launch.one_process_on_the_cpu())
    data = run_data.load_dataset(data_file)
    model = adapter.build(MODEL, data["meta"], HYPER if trains else {"batch_size": BATCH})
    found = {"training": list(program.TRAINING) if trains else [], "trained": trains}
    if trains:
        n = BATCH * BATCHES
        epoch = adapter.train_epoch(model, data["x_train"][:n], data["y_train_onehot"][:n], BATCH)
        found["loss"] = float(epoch["loss"])
        found["accuracy"] = float(epoch["accuracy"])
    outputs = adapter.predict(model, data["x_test"][:2])
    adapter.close()
    found["inference"] = list(program.INFERENCE)
    found["calls"] = calls
    found["output_rows"] = [float(sum(row)) for row in outputs]
    found["finite"] = all(math.isfinite(v) for v in found["output_rows"])
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--data", required=True, help="the prepared digits, digits.npz")
    parser.add_argument(
        "--settings", type=json.loads, default={}, help="the backend's settings, as JSON"
    )
    args = parser.parse_args(argv)
    print(json.dumps(check(args.backend, args.data, args.settings)))


if __name__ == "__main__":
    main()
