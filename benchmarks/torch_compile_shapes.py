"""Native torch inference eager, under torch.compile's default, and under
torch.compile with static shapes, in the harness's order: single samples
(the latency) then batches (the throughput). torch.compile's default
compiles the second shape again with a dynamic batch dimension, and that
graph then serves the batches; ``dynamic=False`` gives each shape its own
graph. Prints, per variant and round, the first call (the compile; a later
variant may find Inductor's cache, the environment's as for the runs, warm
from an earlier one), the median latency at batch 1, the seconds per 1,000
samples at the batch, and the graphs compiled. On an H200, ResNet-50 ran
slower compiled than eager (docs/results-h200.md); this tells whether the dynamic
graph is why:

    PYTHONPATH=src python3 benchmarks/torch_compile_shapes.py --model resnet50 --calls 100
"""

import argparse
import statistics
import time

import numpy as np

from dlbench.models import workloads
from dlbench.run.backends import frameworks

SPECS = {
    "lenet": ({"input_shape": (28, 28, 1), "classes": 10}, 64),
    "resnet50": ({"input_shape": (224, 224, 3), "classes": 1000}, 32),
}
VARIANTS = {
    "eager": None,
    "compiled, torch's default": {},
    "compiled, static shapes": {"dynamic": False},
}


def timer(torch, device):
    def clock(call, x):
        started = time.perf_counter()
        call(x)
        if device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - started

    return clock


def measure(torch, net, options, inputs, calls, clock):
    """One variant: the first call at batch 1, then `calls` timed calls at
    batch 1 and at the batch, each shape warmed by three calls first."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    graphs = counters["stats"]["unique_graphs"]
    call = net if options is None else torch.compile(net, **options)
    found = {}
    with torch.inference_mode():
        found["first call, s"] = clock(call, inputs[0])
        for name, x in zip(("batch 1", "batch"), inputs):
            for _ in range(3):
                clock(call, x)
            found[name] = statistics.median(clock(call, x) for _ in range(calls))
    found["graphs"] = counters["stats"]["unique_graphs"] - graphs
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(SPECS), default="resnet50")
    parser.add_argument("--batch", type=int, help="default: config/gpu.yaml's")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--device", help="default: cuda where torch sees one, else cpu")
    args = parser.parse_args()

    cache = frameworks.torch_compile_cache()  # the runs' own: in the environment
    import torch

    frameworks.torch_precompiled_headers()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.backends.cudnn.benchmark = True
    spec, batch = SPECS[args.model]
    batch = args.batch or batch
    net = workloads.module(args.model, "torch").build(torch, spec).to(device).eval()
    rng = np.random.RandomState(0)
    height, width, channels = spec["input_shape"]
    inputs = [
        torch.from_numpy(rng.standard_normal((rows, channels, height, width)).astype("float32"))
        .contiguous()
        .to(device)
        for rows in (1, batch)
    ]
    clock = timer(torch, device)
    print(
        "{} on {} (torch {}), batch 1 and {}, {} timed calls each".format(
            args.model,
            torch.cuda.get_device_name() if device.type == "cuda" else "CPU",
            torch.__version__,
            batch,
            args.calls,
        )
    )
    print(
        "Inductor's cache: {} ({})".format(
            cache["torch_compile_cache"], "warm" if cache["compile_cache_warm"] else "cold"
        )
    )
    print("round  variant                    first call, s  p50 batch 1, ms  s/1,000  graphs")
    results = {}
    for round_ in range(1, args.rounds + 1):
        for name, options in VARIANTS.items():
            found = measure(torch, net, options, inputs, args.calls, clock)
            per_1000 = 1000.0 * found["batch"] / batch
            results.setdefault(name, []).append(per_1000)
            print(
                "{:<6} {:<26} {:>13.2f}  {:>15.3f}  {:>7.4f}  {:>6}".format(
                    round_,
                    name,
                    found["first call, s"],
                    1000.0 * found["batch 1"],
                    per_1000,
                    found["graphs"],
                )
            )
    eager = statistics.median(results["eager"])
    for name in list(VARIANTS)[1:]:
        print(
            "{}: eager / compiled {:.2f} (median of rounds, s per 1,000)".format(
                name, eager / statistics.median(results[name])
            )
        )


if __name__ == "__main__":
    main()
