"""How often does one run fail by itself? Repeats one cell of the matrix
through the real supervisor and harness and prints how many runs ended ok,
and the reason of each one that did not. For crashes that show once in many
runs (a rank aborting at exit under torchrun), which one Snakemake run
cannot tell from luck. Run it with the workflow's Python after the data is
prepared and the backend's venv is built (``make smoke-full``):

    .venv/bin/python benchmarks/run_stability.py --run digits/mlp/keras-torch/2 \\
        --accelerator emulated-cpu --times 60
"""

import argparse
import collections
import sys

import runs
import yaml

from dlbench.plan import matrix, run_spec

ROOT = runs.ROOT


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/smoke-full.yaml")
    parser.add_argument("--run", required=True, help="dataset/model/backend/devices")
    parser.add_argument("--accelerator", help="the config's accelerator, e.g. emulated-cpu")
    parser.add_argument("--times", type=int, default=20)
    args = parser.parse_args()

    config = yaml.safe_load((ROOT / args.config).read_text())
    if args.accelerator:
        config["accelerator"] = args.accelerator
    dataset, model, backend, devices = args.run.split("/")
    run = matrix.Run(dataset, model, backend, devices=int(devices), repeat=1)
    spec = runs.with_inputs(run_spec.spec(config, run).as_json(), args.config)
    data = str(ROOT / "results" / "data" / "{}.npz".format(dataset))
    python = runs.venv_python(spec["environment"])
    reasons = collections.Counter()
    for attempt in range(1, args.times + 1):
        record = runs.record_of(spec, python, data)
        if record["status"] != "ok":
            reason = record.get("reason") or record["status"]
            reasons[reason] += 1
            print("run {}: {}\n{}".format(attempt, reason, record.get("error") or ""), flush=True)
        else:
            print("run {}: ok".format(attempt), flush=True)
    failed = sum(reasons.values())
    ok = args.times - failed
    print("\n{}: {} of {} runs ok, {} failed".format(args.run, ok, args.times, failed))
    for reason, count in reasons.most_common():
        print("  {} x {}".format(count, reason))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
