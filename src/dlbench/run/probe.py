"""The CPU's and the GPU's attainable rates: the peaks that model FLOP
utilisation is measured against (a datasheet peak assumes every vector unit
busy at the highest clock, which no framework's CPU kernels reach; a GPU's
sustained matrix rate is below its boost-clock datasheet figure too).

Two probes: every run records a quick float32 product through its own
environment's numpy (``matmul_gflops``: 1024 x 1024, after the measurement),
and the workflow measures the machine once per thread count and precision
(``machine_probe``, rule cpu_probe) at growing sizes until the rate stops
rising; utilisation takes the machine's probe where there is one. On GPU
cells, the same plateau of torch.mm on one GPU (``gpu_probe``, rule
gpu_probe), the datasheet figure beside it."""

import os
import socket
import time

SIZE = 1024
CALLS = 5


def matmul_gflops(size=SIZE, calls=CALLS):
    """Best of ``calls`` products of two ``size`` x ``size`` float32
    matrices, after one untimed call, in GFLOP/s (2 size^3 per product)."""
    import numpy

    generator = numpy.random.RandomState(0)
    left = generator.standard_normal((size, size)).astype(numpy.float32)
    right = generator.standard_normal((size, size)).astype(numpy.float32)
    numpy.dot(left, right)
    best = float("inf")
    for _ in range(calls):
        start = time.perf_counter()
        numpy.dot(left, right)
        best = min(best, time.perf_counter() - start)
    return {
        "gflops": 2.0 * size**3 / best / 1e9,
        "size": size,
        "dtype": "float32",
        "calls": calls,
        "library": "numpy {}".format(numpy.__version__),
    }


# The machine's probe (rule cpu_probe): once per machine, thread count and
# precision, in the keras-torch environment (torch's CPU matrix product,
# oneDNN, in each precision). The rate of one size says little: measured on
# a 2-core EPYC with torch, 147, 136, 124 and 150 GFLOP/s at 512, 1024, 2048
# and 4096 (a small product fits the caches, a large one amortises the
# threads' start). So every size is measured, up to the largest whose
# product stays under LONGEST_CALL_S, and the best rate is the peak; it has
# reached the plateau where the two largest sizes agree within 5%.
PLATEAU_SIZES = (512, 1024, 2048, 4096)
PLATEAU_GAIN = 1.05
LONGEST_CALL_S = 4.0
PLATEAU_CALLS = 3
TORCH_DTYPES = {
    "float32": "float32",
    "tf32": "float32",
    "mixed_bfloat16": "bfloat16",
    "mixed_float16": "float16",
}


def plateau(prepare, sizes=PLATEAU_SIZES, calls=PLATEAU_CALLS):
    """The best rate of square products over growing ``sizes``, stopping
    before a size whose product would take longer than ``LONGEST_CALL_S``
    (8 times the last one's work). ``prepare(size)`` returns a function
    that computes one product and waits for it. Every size's best rate is
    kept; ``reached_plateau``: the two largest measured agree within 5%."""
    measured = []
    for size in sizes:
        if measured and measured[-1]["seconds"] * (size / measured[-1]["size"]) ** 3 > (
            LONGEST_CALL_S
        ):
            break
        multiply = prepare(size)
        multiply()  # untimed: allocation, kernel choice
        best = float("inf")
        for _ in range(calls):
            start = time.perf_counter()
            multiply()
            best = min(best, time.perf_counter() - start)
        measured.append({"size": size, "gflops": 2.0 * size**3 / best / 1e9, "seconds": best})
    top = max(measured, key=lambda row: row["gflops"])
    rates = sorted((row["gflops"] for row in measured[-2:]), reverse=True)
    reached = len(rates) == 2 and rates[0] < PLATEAU_GAIN * rates[1]
    return {
        "gflops": top["gflops"],
        "size": top["size"],
        "reached_plateau": reached,
        "sizes": measured,
    }


def torch_products(precision, device="cpu"):
    """``prepare`` for ``plateau``: torch.mm of two random square matrices in
    the dtype of ``precision`` on ``device``, each product waited for; float32
    in IEEE arithmetic, tf32 with TensorFloat-32 allowed (the runs' manifest)."""
    import torch

    from dlbench.run import manifest

    manifest.set_torch(torch, precision, {}, on_gpu=False)
    dtype = getattr(torch, TORCH_DTYPES[precision])
    wait = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def prepare(size):
        generator = torch.Generator().manual_seed(0)
        left = torch.randn(size, size, generator=generator).to(device=device, dtype=dtype)
        right = torch.randn(size, size, generator=generator).to(device=device, dtype=dtype)

        def multiply():
            torch.mm(left, right)
            wait()

        return multiply

    return prepare


# A GPU's products: small sizes are launch-bound, the plateau comes later.
GPU_SIZES = (1024, 2048, 4096, 8192, 16384)


def gpu_probe(precision, lock_dir=None, wait_s=3600):
    """One GPU's attainable rate in ``precision`` (the GPU taken under the
    runs' lock files, so that no timed run shares it), with what it ran on."""
    from dlbench.host import gpus, runtime

    with gpus.assign(1, lock_dir=lock_dir, timeout_s=wait_s) as allocation:
        os.environ.update(allocation.environment())
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA GPU (torch {})".format(torch.__version__))
        found = plateau(torch_products(precision, "cuda"), sizes=GPU_SIZES)
        found.update(
            device="gpu",
            gpu_name=torch.cuda.get_device_name(0),
            gpu_id=allocation.ids[0],
            precision=precision,
            dtype=TORCH_DTYPES[precision],
            library="torch {} (CUDA {}, TF32 matmul {})".format(
                torch.__version__,
                torch.version.cuda,
                torch.backends.cuda.matmul.allow_tf32,
            ),
            hostname=socket.gethostname(),
            measured=runtime.utc_now(),
        )
    return found


def machine_probe(precision, threads, largest=PLATEAU_SIZES[-1]):
    """The machine's attainable rate in ``precision`` on ``threads`` pinned
    threads, with what it ran on; products up to ``largest`` (config
    probe_largest_size)."""
    from dlbench.host import cpu_isa, runtime

    cpus = runtime.pin_to_cpus(threads)
    import torch

    torch.set_num_threads(threads)
    sizes = [size for size in PLATEAU_SIZES if size <= largest]
    found = plateau(torch_products(precision), sizes)
    found.update(
        precision=precision,
        largest_size=largest,
        dtype=TORCH_DTYPES[precision],
        threads=threads,
        cpus_pinned=cpus,
        library="torch {} (oneDNN: {})".format(
            torch.__version__, torch.backends.mkldnn.is_available()
        ),
        cpu_model=runtime.cpu_model(),
        cpu_precision_flags=runtime.cpu_precision_flags(),
        cpu_flags_unreadable=cpu_isa.flags_unreadable(),
        hostname=socket.gethostname(),
        measured=runtime.utc_now(),
    )
    return found


def main(argv=None):
    import argparse
    import json

    from dlbench.host import runtime

    parser = argparse.ArgumentParser(description="The machine's matrix-product rate, per precision")
    parser.add_argument("--precision", required=True, choices=sorted(TORCH_DTYPES))
    parser.add_argument("--threads", required=True, help="a count, or all")
    parser.add_argument("--machine", required=True, help="the machine's name in the results")
    parser.add_argument("--output", required=True)
    parser.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--gpu-lock-dir", default=None, help="the runs' GPU lock files")
    parser.add_argument(
        "--largest",
        type=int,
        choices=PLATEAU_SIZES,
        default=PLATEAU_SIZES[-1],
        help="the largest product on CPU (config probe_largest_size)",
    )
    args = parser.parse_args(argv)
    threads = runtime.resolve_threads(args.threads)
    os.environ.update(runtime.thread_environment(threads))  # before torch sizes its pools
    try:
        if args.device == "gpu":
            found = gpu_probe(args.precision, args.gpu_lock_dir or None)
        else:
            found = machine_probe(args.precision, threads, args.largest)
    except (ImportError, RuntimeError) as error:  # no torch, no GPU: MFU falls back, said why
        found = {"precision": args.precision, "reason": "no probe: {}".format(error)}
    found.update(machine=args.machine, threads_setting=args.threads)
    print(json.dumps(found, indent=1))
    runtime.write_json_atomic(args.output, found)


if __name__ == "__main__":
    main()
