"""Harness overhead: the same Keras training loop timed bare and through the
harness, interleaved in one process. Prints the median steady-state epoch
time of each and the ratio. Run it with a backend's interpreter:

    PYTHONPATH=src .venvs/keras-jax/bin/python benchmarks/harness_overhead.py \
        --backend keras-jax --data results/data/digits.npz
"""

import argparse
import statistics
import time

import numpy as np

from dlbench import backends, catalog, harness, runtime
from dlbench.models import keras_models

HYPER = {
    "batch_size": 128,
    "loss": "categorical_crossentropy",
    "optimizer": {"name": "rmsprop", "learning_rate": 0.001, "rho": 0.9, "epsilon": 1e-7},
}


class NoLog:
    def add(self, row):
        pass


def bare_epochs(keras, data, epochs, seed, jit_compile):
    """What a user would write: build, compile, fit epoch by epoch, time it."""
    model = keras_models.mlp(keras, data["x_train"].shape[1:], 10)
    model.compile(
        optimizer=keras_models.optimizer(keras, HYPER["optimizer"]),
        loss=HYPER["loss"],
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    seconds = []
    for epoch in range(epochs):
        order = harness.epoch_order(seed, epoch, len(data["x_train"]))
        x, y = data["x_train"][order], data["y_train_onehot"][order]
        start = time.perf_counter()
        model.fit(x, y, batch_size=HYPER["batch_size"], epochs=1, shuffle=False, verbose=0)
        seconds.append(time.perf_counter() - start)
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="keras-jax")
    parser.add_argument("--data", default="results/data/digits.npz")
    parser.add_argument("--tile", type=int, default=10, help="repeat the data to lengthen epochs")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    threads = runtime.resolve_threads("all")
    runtime.pin_to_cpus(threads)
    settings = {"jit_compile": True} if "torch" not in args.backend else {"jit_compile": False}
    adapter = backends.adapter_for(args.backend, settings)
    adapter.setup(threads=threads, seed=1, devices=0)
    data = harness.load_dataset(args.data, catalog.DATASETS["digits"]["classes"])
    for key in ("x_train", "y_train_onehot"):
        data[key] = np.concatenate([data[key]] * args.tile)
    spec = {
        "model": "mlp",
        "backend": args.backend,
        "seed": 1,
        "validate_every_epoch": False,
        "hyper": dict(HYPER, epochs=args.epochs),
    }
    bare, harnessed = [], []
    for _ in range(args.rounds):
        bare += bare_epochs(adapter.keras, data, args.epochs, 1, settings["jit_compile"])[1:]
        result = harness.train(spec, adapter, data, NoLog())
        harnessed += [epoch["wall_seconds"] for epoch in result["epochs"][1:]]
    bare_median, harness_median = statistics.median(bare), statistics.median(harnessed)
    print(
        "{}: {} samples/epoch, {} steady epochs each; bare median {:.4f} s, harness median "
        "{:.4f} s, overhead {:+.2f} %".format(
            args.backend,
            len(data["x_train"]),
            len(bare),
            bare_median,
            harness_median,
            100 * (harness_median / bare_median - 1),
        )
    )


if __name__ == "__main__":
    main()
