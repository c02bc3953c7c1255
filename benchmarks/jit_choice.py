"""Is XLA (Keras' ``jit_compile``) the faster setting for a workload on this
machine? Runs one workload of a config through the real supervisor and
harness with ``jit_compile`` true and false, alternating, and prints first
and steady-state epoch seconds (or p50 latency) of each. The configs turn
XLA off where this showed it slower. Run it with the workflow's Python after
the workload's data is prepared:

    .venv/bin/python benchmarks/jit_choice.py --config config/smoke-full.yaml \
        --workload digits/cnn --backend keras-tensorflow --pairs 2
"""

import argparse
import statistics
import sys

import runs
import yaml

from dlbench.plan import matrix, run_spec

ROOT = runs.ROOT


def measure(spec, python, data, jit):
    spec = dict(spec, backend_settings=dict(spec["backend_settings"], jit_compile=jit))
    record = runs.record_of(spec, python, data)
    if record["status"] != "ok":
        raise SystemExit("jit_compile={}: {}".format(jit, record["error"]))
    if spec["task"] == "infer":
        return {"p50_ms": record["latency_ms"]["p50"]}
    return {"first": record["first_epoch_seconds"], "steady": record["steady_epoch_seconds"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/smoke-full.yaml")
    parser.add_argument("--workload", required=True, help="dataset/model")
    parser.add_argument("--backend", default="keras-tensorflow")
    parser.add_argument("--epochs", type=int, help="override the workload's epochs")
    parser.add_argument(
        "--train-samples", type=int, help="train on the first N samples (the workload's default)"
    )
    parser.add_argument("--data", help="a prepared .npz other than the workload's own")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()

    config = yaml.safe_load((ROOT / args.config).read_text())
    config.setdefault("seed", 42)
    config.setdefault("threads", "all")
    config.setdefault("validate_every_epoch", True)
    dataset, model = args.workload.split("/")
    run = matrix.Run(dataset, model, args.backend, devices=0, repeat=1)
    spec = runs.with_inputs(run_spec.spec(config, run).as_json(), args.config)
    if args.epochs:
        spec["hyper"]["epochs"] = args.epochs
    if args.train_samples:
        spec["hyper"]["train_samples"] = args.train_samples
    python = runs.venv_python(args.backend)
    data = args.data or str(ROOT / "results" / "data" / "{}.npz".format(dataset))

    found = {True: [], False: []}
    for pair in range(args.pairs):
        for jit in (True, False) if pair % 2 == 0 else (False, True):
            found[jit].append(measure(spec, python, data, jit))
            print("pair {} jit_compile={}: {}".format(pair + 1, jit, found[jit][-1]), flush=True)
    for jit, results in found.items():
        medians = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print("{} {} jit_compile={}: median {}".format(args.workload, args.backend, jit, medians))


if __name__ == "__main__":
    sys.exit(main())
