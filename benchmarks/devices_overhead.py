"""What does the data-parallel machinery cost? Trains one workload on 1 and 2
devices emulated on the CPU (``accelerator: emulated-cpu``) for each backend
that trains data-parallel, through the real supervisor and harness,
alternating the device counts, and prints steady-state epoch seconds, the
2-device / 1-device ratio and the replicas' largest weight difference.
Emulated devices share the CPU's cores: this measures overhead, never a
speed-up. Run it with the workflow's Python after the data is prepared and
the backends' venvs are built (``make smoke-full``):

    .venv/bin/python benchmarks/devices_overhead.py --workload digits/mlp --pairs 2
"""

import argparse
import statistics
import sys

import runs
import yaml

from dlbench.plan import matrix, run_spec
from dlbench.registry import BUILT_IN

ROOT = runs.ROOT


def measure(spec, python, data):
    record = runs.record_of(spec, python, data)
    if record["status"] != "ok":
        raise SystemExit("{} on {} devices: {}".format(spec["backend"], spec["devices"], record))
    return record


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/smoke-full.yaml")
    parser.add_argument("--workload", default="digits/mlp", help="dataset/model")
    parser.add_argument("--backends", nargs="*", help="default: every data-parallel backend")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()

    config = yaml.safe_load((ROOT / args.config).read_text())
    config.update(devices=[1, 2], accelerator="emulated-cpu")
    dataset, model = args.workload.split("/")
    data = str(ROOT / "results" / "data" / "{}.npz".format(dataset))
    backends = args.backends or [
        b for b in config["backends"] if not BUILT_IN.not_applicable(b, "train", 2, "emulated-cpu")
    ]
    rows = []
    for backend in backends:
        python = runs.venv_python(backend)
        steady = {1: [], 2: []}
        divergence = []
        for pair in range(args.pairs):
            for devices in (1, 2) if pair % 2 == 0 else (2, 1):
                run = matrix.Run(dataset, model, backend, devices=devices, repeat=1)
                spec = runs.with_inputs(run_spec.spec(config, run).as_json(), args.config)
                record = measure(spec, python, data)
                steady[devices].append(record["steady_epoch_seconds"])
                if devices == 2:
                    divergence.append(record["replica_max_abs_weight_diff"])
                print(
                    "{} devices={} steady {:.4f} s".format(backend, devices, steady[devices][-1]),
                    flush=True,
                )
        one, two = statistics.median(steady[1]), statistics.median(steady[2])
        rows.append((backend, one, two, two / one, max(divergence)))
    print("\n{} on emulated CPU devices, median of {} pair(s):".format(args.workload, args.pairs))
    print("| backend | 1 device s/epoch | 2 devices s/epoch | 2/1 | replica weight diff |")
    print("|---|---|---|---|---|")
    for backend, one, two, ratio, diff in rows:
        print("| {} | {:.4f} | {:.4f} | {:.2f} | {:g} |".format(backend, one, two, ratio, diff))


if __name__ == "__main__":
    sys.exit(main())
