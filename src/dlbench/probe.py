"""The CPU's attainable float32 rate, measured with the run: a square
matrix product through numpy's BLAS on the run's pinned threads. It is the
peak that CPU runs' model FLOP utilisation is measured against (a
datasheet peak assumes every vector unit busy at the highest clock, which
no framework's CPU kernels reach)."""

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
