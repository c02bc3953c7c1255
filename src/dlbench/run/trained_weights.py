"""Trained weights for an inference workload: its shared initial weights
(dlbench.models.initial_weights) trained once by the workflow, so that every
backend of the workload infers with the same trained model. (The LeNet
latency comparison could not keep accuracy constant across its
implementations: each had other weights.)

The training is the harness' own loop (the shared data order, the epoch
loop, the test score) on keras-torch, on one thread, with the workload's
``trained_weights`` settings (epochs, batch_size, loss, optimizer). The
weights are written in the shared weights' format (Keras' order and axes,
the draw's layout with a ``trained`` block that says how), sealed,
so that every backend loads them as it loads a draw.

    python -m dlbench.run.trained_weights --model NAME --data DATA.npz \\
        --weights DRAWN.npz --training JSON --seed N --output OUT.npz
"""

import argparse
import json
import os
import sys

BACKEND = "keras-torch"


def train(model_name, data_path, drawn_path, training, seed, registry):
    """(layout, weights, result): the drawn weights trained with
    ``training`` (a training workload's hyper-parameters); ``registry`` (a
    dlbench.registry.Registry) holds the model."""
    import numpy as np

    from dlbench.record.run_spec import RunSpec
    from dlbench.run import backends, harness, launch, run_data, shared_weights
    from dlbench.run.training import EpochLog

    adapter = backends.adapter_for(BACKEND, {"jit_compile": False}, registry)
    adapter.setup(
        threads=1,  # a preparation, not a benchmark: one thread, reproducible sums
        seed=seed,
        devices=0,
        parallel=launch.one_process_on_the_cpu(),
    )
    data = run_data.load_dataset(data_path)
    spec = RunSpec(
        # the prepared dataset's file is named after it (results/data/{dataset}.npz)
        dataset=os.path.splitext(os.path.basename(data_path))[0],
        model=model_name,
        backend=BACKEND,
        seed=seed,
        hyper=training,
        initial_weights=drawn_path,
        validate_every_epoch=False,
    )
    model = adapter.build(model_name, data["meta"], training)
    log = EpochLog(os.devnull)
    try:
        result = harness.train(spec, adapter, data, harness.Process(log), model=model)
    finally:
        log.close()
    drawn = result["initial_weights"]  # the loader checked every shape against the file
    if not drawn["loaded"]:
        raise RuntimeError("the drawn weights did not load: " + drawn["reason"])
    layout, _ = shared_weights.read(drawn_path)
    weights = [np.asarray(values, dtype="float32") for values in model.get_weights()]
    layout["trained"] = {
        "backend": BACKEND,
        "versions": adapter.versions(),
        "from": {"file": drawn["file"], "sha256": drawn["sha256"]},
        "hyper": training,
        "epochs": [
            {key: row[key] for key in ("epoch", "loss", "accuracy")} for row in result["epochs"]
        ],
        "test_loss": result["test_loss"],
        "test_accuracy": result["test_accuracy"],
    }
    return layout, weights, result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--custom", help="the model's custom_models entry, as JSON")
    parser.add_argument("--data", required=True, help="the prepared dataset (.npz)")
    parser.add_argument("--weights", required=True, help="the shared initial weights (.npz)")
    parser.add_argument("--training", required=True, help="the trained_weights settings, JSON")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args(argv)
    from dlbench.models import initial_weights
    from dlbench.registry import Registry
    from dlbench.run import run_data, shared_weights

    no_data = run_data.unavailable_reason(args.data)
    if no_data:  # the inference runs never start: nothing to train, the reason kept
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        layout = {"format": initial_weights.FORMAT, "seed": args.seed, "weights": []}
        shared_weights.write(args.output, dict(layout, not_drawn=no_data), [])
        print(no_data)
        return 0
    registry = Registry({args.model: json.loads(args.custom)} if args.custom else None)
    layout, weights, result = train(
        args.model, args.data, args.weights, json.loads(args.training), args.seed, registry
    )
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    shared_weights.write(args.output, layout, weights)
    print(
        "trained {} for {} epochs on {}: test accuracy {:.4f}, loss {:.4f} -> {}".format(
            args.model,
            len(result["epochs"]),
            BACKEND,
            result["test_accuracy"],
            result["test_loss"],
            args.output,
        )
    )


if __name__ == "__main__":
    sys.exit(main())
