"""Harness overhead: one Keras model, epochs alternating between a bare
``model.fit`` timed with ``perf_counter`` and the harness's own timed epoch
(``harness.timed_epoch``: the adapter's fit with its epoch timer). Pairing
consecutive epochs of one model cancels the drift and model-to-model spread
that a 2-core machine shows between separate runs. Run it with a backend's
interpreter:

    PYTHONPATH=src .venvs/keras-jax/bin/python benchmarks/harness_overhead.py \
        --backend keras-jax --data results/data/digits.npz
"""

import argparse
import statistics
import time

import numpy as np

from dlbench.host import runtime
from dlbench.run import backends, harness

HYPER = {
    "batch_size": 128,
    "loss": "categorical_crossentropy",
    "optimizer": {"name": "rmsprop", "learning_rate": 0.001, "rho": 0.9, "epsilon": 1e-7},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="keras-jax")
    parser.add_argument("--data", default="results/data/digits.npz")
    parser.add_argument("--tile", type=int, default=10, help="repeat the data to lengthen epochs")
    parser.add_argument("--pairs", type=int, default=30)
    args = parser.parse_args()

    threads = runtime.resolve_threads("all")
    runtime.pin_to_cpus(threads)
    adapter = backends.adapter_for(args.backend, {"jit_compile": "torch" not in args.backend})
    adapter.setup(threads=threads, seed=1, devices=0)
    data = harness.load_dataset(args.data)
    x = np.concatenate([data["x_train"]] * args.tile)
    y = np.concatenate([data["y_train_onehot"]] * args.tile)
    model = adapter.build("mlp", data["meta"], HYPER)
    batch = HYPER["batch_size"]
    harness.timed_epoch(adapter, model, x, y, batch)  # compile before timing anything

    bare, timed, reported, bare_cpu, timed_cpu = [], [], [], [], []
    for pair in range(args.pairs):
        order = ("bare", "harness") if pair % 2 == 0 else ("harness", "bare")
        for variant in order:
            cpu_start = time.process_time()
            if variant == "bare":
                start = time.perf_counter()
                model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
                bare.append(time.perf_counter() - start)
                bare_cpu.append(time.process_time() - cpu_start)
            else:
                step, wall = harness.timed_epoch(adapter, model, x, y, batch)
                timed.append(wall)
                timed_cpu.append(time.process_time() - cpu_start)
                reported.append(step["seconds"])
    ratios = [t / b for t, b in zip(timed, bare)]
    cpu_ratios = [t / b for t, b in zip(timed_cpu, bare_cpu)]
    print(
        "{}: {} samples/epoch, {} pairs; bare fit median {:.4f} s; harness wall median "
        "{:.4f} s; median paired ratio {:.4f} (overhead {:+.2f} %, pairs' IQR {:.3f}-{:.3f}); "
        "epoch time the record reports (loop only) median {:.4f} s; process CPU time: "
        "median paired ratio {:.4f} (overhead {:+.2f} %, IQR {:.3f}-{:.3f})".format(
            args.backend,
            len(x),
            args.pairs,
            statistics.median(bare),
            statistics.median(timed),
            statistics.median(ratios),
            100 * (statistics.median(ratios) - 1),
            np.percentile(ratios, 25),
            np.percentile(ratios, 75),
            statistics.median(reported),
            statistics.median(cpu_ratios),
            100 * (statistics.median(cpu_ratios) - 1),
            np.percentile(cpu_ratios, 25),
            np.percentile(cpu_ratios, 75),
        )
    )


if __name__ == "__main__":
    main()
