"""native-cudnn's LeNet against the same network in PyTorch, on one GPU:
the same random weights (Keras' layout, loaded by each the way a run loads
the shared weights), the largest difference between their class
probabilities at batch 1 and 64, and the median latency of each over
alternating calls (the harness's clock: the call, then the device waited
for). Needs a GPU, CuPy and torch in one interpreter:

    PYTHONPATH=src python3 benchmarks/cudnn_lenet.py --calls 200
"""

import argparse
import statistics
import sys
import time

import numpy as np

from dlbench.run import backends

SPEC = {"input_shape": (28, 28, 1), "classes": 10}
KERAS_SHAPES = [  # LeNet's weights as Keras holds them: (class, variable, shape)
    ("Conv2D", "kernel", (5, 5, 1, 20)),
    ("Conv2D", "bias", (20,)),
    ("Conv2D", "kernel", (5, 5, 20, 50)),
    ("Conv2D", "bias", (50,)),
    ("Dense", "kernel", (800, 500)),
    ("Dense", "bias", (500,)),
    ("Dense", "kernel", (500, 10)),
    ("Dense", "bias", (10,)),
]


def keras_weights(seed):
    rng = np.random.RandomState(seed)
    layout = {"weights": []}
    weights = []
    for index, (keras_class, variable, shape) in enumerate(KERAS_SHAPES):
        entry = {"path": "lenet/layer{}/{}".format(index // 2, variable)}
        entry.update({"class": keras_class, "variable": variable})
        if index == 4:
            entry["flattened_from"] = [4, 4, 50]
        layout["weights"].append(entry)
        weights.append((rng.standard_normal(shape) * 0.1).astype("float32"))
    return layout, weights


def torch_lenet(torch, layout, weights):
    from dlbench.models.layers import torch_layers
    from dlbench.models.workloads.lenet import in_torch

    net = in_torch.build(torch, SPEC).cuda().eval()
    torch_layers.load_keras_weights(torch, net, layout, weights)
    torch.backends.cudnn.benchmark = True

    def predict(x):
        with torch.inference_mode():
            inputs = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2))).cuda()
            return torch.softmax(net(inputs), dim=1).cpu().numpy()

    return predict


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    layout, weights = keras_weights(args.seed)
    adapter = backends.adapter_for("native-cudnn", {})
    try:
        adapter.setup(threads=1, seed=args.seed, devices=1, parallel={"accelerator": "gpu"})
    except (OSError, RuntimeError) as error:  # no cuDNN, or no GPU
        sys.exit("cudnn_lenet.py needs an NVIDIA GPU with cuDNN: {}".format(error))
    import torch

    print("versions:", adapter.versions())
    model = adapter.build("lenet", SPEC, {})
    adapter.load_initial_weights(model, layout, weights)
    by_torch = torch_lenet(torch, layout, weights)
    rng = np.random.RandomState(args.seed + 1)
    for batch in (1, 64):
        x = rng.uniform(0, 1, (batch, 28, 28, 1)).astype("float32")
        ours, theirs = adapter.predict(model, x), by_torch(x)
        print(
            "batch {}: largest difference of the probabilities {:.2e}; same classes: {}".format(
                batch,
                float(np.abs(ours - theirs).max()),
                bool((ours.argmax(1) == theirs.argmax(1)).all()),
            )
        )
    print("settings:", adapter.settings())
    x = rng.uniform(0, 1, (1, 28, 28, 1)).astype("float32")
    clocks = {"cudnn": [], "torch": []}
    calls = {"cudnn": lambda: adapter.predict(model, x), "torch": lambda: by_torch(x)}
    for _ in range(args.calls):
        for name in clocks:
            start = time.perf_counter()
            calls[name]()
            adapter.synchronize()
            torch.cuda.synchronize()
            clocks[name].append(time.perf_counter() - start)
    for name, times in clocks.items():
        print(
            "{}: p50 latency {:.3f} ms over {} calls".format(
                name, 1e3 * statistics.median(times), len(times)
            )
        )
    adapter.close()


if __name__ == "__main__":
    main()
