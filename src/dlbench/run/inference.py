"""An inference run's parts around its clocked calls: the samples it cycles
through (``Samples``), the latency and throughput figures of the timed calls
(``figures``, ``percentiles``), the predictions kept for the comparison
across backends (``predictions``) and the op profile's window.
dlbench.run.harness runs the calls on its clock between them
(``harness.infer``). Importable on Python 3.6.
"""

import statistics
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Sequence

from dlbench.record import fields
from dlbench.record.contract import Record
from dlbench.record.run_spec import RunSpec
from dlbench.run import op_profiling
from dlbench.run.run_data import Inputs, take

if TYPE_CHECKING:
    from dlbench.run.backends.base import Adapter

# The outputs a record keeps per sample of its predictions: every class
# probability of a classifier, the first features of a feature extractor
# (with the norm of all of them).
PREDICTION_COLUMNS = 64


class Samples(object):
    """The test split's inputs, cycled through in batches of any size."""

    def __init__(self, x: Inputs, count: int) -> None:
        self.x = x
        self.count = count  # samples in the split

    def batch(self, index: int, size: int) -> Inputs:
        """The ``index``-th batch of ``size``, wrapping round the split
        (copied: the caller copies it outside the clock)."""
        start = (index * size) % self.count
        return take(self.x, [(start + offset) % self.count for offset in range(size)])

    def batches(self, size: int, calls: int) -> Iterator[Inputs]:
        """The first ``calls`` batches of ``size``, each copied as it is taken."""
        return (self.batch(index, size) for index in range(calls))


def describe(spec: RunSpec, parameters: Optional[int]) -> None:
    """The run's first line: the model, its size and what is timed."""
    hyper = spec.hyper
    print(
        "{} on {}: {} parameters; latency over {} single samples after {} warm-up calls, "
        "throughput over {} batches of {}".format(
            spec.model,
            spec.backend,
            parameters,
            hyper["latency_samples"],
            hyper["warmup"],
            hyper["throughput_batches"],
            hyper["batch_size"],
        ),
        flush=True,
    )


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 90, 99)) -> Dict[str, float]:
    """Nearest-rank percentiles: each is one of the measured values."""
    ordered = sorted(values)
    found = {}
    for point in points:
        rank = max(1, int(-(-point * len(ordered) // 100)))  # ceil without math
        found["p{}".format(point)] = ordered[rank - 1]
    return found


def figures(latencies: List[float], batch_seconds: List[float], batch_size: int) -> Record:
    """The figures of the timed calls: single-sample latencies (their
    percentiles and mean, in ms) and the throughput at ``batch_size`` of
    the median batch call."""
    steady_batch = statistics.median(batch_seconds)
    found: Record = {
        "latencies_ms": [1000.0 * t for t in latencies],
        "batch_seconds": batch_seconds,
    }
    for point, seconds in percentiles(latencies).items():
        fields.put(found, "latency_{}_ms".format(point), 1000.0 * seconds)
    fields.put(found, "samples_per_second", batch_size / steady_batch)
    fields.put(found, "seconds_per_1000_samples", 1000.0 * steady_batch / batch_size)
    found["latency_ms"]["mean"] = 1000.0 * statistics.mean(latencies)
    return found


def print_figures(result: Record) -> None:
    print(
        "latency p50 {:.3f} ms, p90 {:.3f} ms, p99 {:.3f} ms; throughput "
        "{:.1f} samples/s ({:.3f} s per 1000)".format(
            fields.value_of(result, "latency_p50_ms"),
            fields.value_of(result, "latency_p90_ms"),
            fields.value_of(result, "latency_p99_ms"),
            fields.value_of(result, "samples_per_second"),
            fields.value_of(result, "seconds_per_1000_samples"),
        ),
        flush=True,
    )


def predictions(
    adapter: "Adapter", model: Any, x: Inputs, count: int, classifier: bool = True
) -> Dict[str, Any]:
    """The model's outputs for the first ``count`` test samples, one call
    (the batch shape timed before): what the prediction comparison
    (dlbench.run.equivalence.compare_predictions) compares across backends."""
    import hashlib

    import numpy as np

    outputs = np.asarray(adapter.predict(model, take(x, list(range(count)))), dtype="float64")
    found = {
        "samples": int(outputs.shape[0]),
        "columns": int(outputs.shape[1]),
        "outputs": [[float(value) for value in row[:PREDICTION_COLUMNS]] for row in outputs],
        "norms": [float(value) for value in np.linalg.norm(outputs, axis=1)],
    }
    if classifier:
        classes = [int(value) for value in outputs.argmax(axis=1)]
        found["classes"] = classes
        found["classes_sha256"] = hashlib.sha256(
            ",".join(map(str, classes)).encode("ascii")
        ).hexdigest()
    return found


def op_window(
    adapter: "Adapter", model: Any, samples: Samples, batch_size: int, batch_seconds: List[float]
) -> op_profiling.Window:
    """The op profile's window (op_profiling.WINDOW): batches of
    ``batch_size`` as many as op_profiling.window_steps takes at the timed
    median batch call's pace, copied now."""
    steps = op_profiling.window_steps(statistics.median(batch_seconds), op_profiling.MAX_STEPS)
    window = list(samples.batches(batch_size, steps))
    return (lambda: [adapter.predict(model, x) for x in window], steps, model)
