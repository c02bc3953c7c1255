"""How long a campaign's runs should take on a GPU, from earlier records of
the same kind of GPU (``--dry-run`` of dlbench.campaign.gpu_campaign).

A GPU run's time is its start (the process, the framework's import and CUDA
set-up, the model, the record) plus its timed work. Both come from the
nearest records there are, and each estimate says which:

- the start: the backend's median of (record's wall time - its timed work);
- a training step: the same backend and model's steady step, else the
  backend's median step over the other models it trained (on a GPU, small
  models' steps are launch-bound: the step costs about the same whatever the
  model), else the same model's median over the other backends; the first
  epoch adds what it took over a steady one, from the same records;
- an inference call: the same backend and model's latency and throughput,
  else the other backends' of the same model (its size sets the call), else
  the backend's other models'.

A steady epoch of a small stand-in dataset holds the epoch's own overhead
besides its steps, so a step's time from it errs long.

The work scales with the planned epochs, samples and batches. A precision
is not told apart (tf32 is timed as float32: a bound on its time).
"""

import collections
import math
import statistics

from dlbench import catalog
from dlbench.analysis import imported_results
from dlbench.data import raw_formats
from dlbench.plan import matrix
from dlbench.record.fields import Status

Estimate = collections.namedtuple("Estimate", "seconds basis")


def ok_records(sources):
    """The ok run records in ``sources`` (folders or results.tar.gz packs of
    earlier campaigns), each checked and read as the current version, as
    ``import_results`` reads another machine's."""
    records, _ = imported_results.import_records(sources, local_machine=None)
    return [record for record in records if record["status"] == Status.OK]


def _timed_work(record):
    if record["task"] == "train":
        return sum(epoch.get("wall_seconds") or epoch["seconds"] for epoch in record["epochs"])
    return sum(record.get("latencies_ms") or []) / 1000.0 + sum(record.get("batch_seconds") or [])


def _steps(samples, batch_size):
    return max(1, math.ceil(samples / batch_size))


def train_samples(dataset, entry):
    """The training samples of a generated or synthetic dataset (the GPU
    campaign's data), less a workload's validation split; None where the
    catalog does not say (a downloaded dataset)."""
    spec = catalog.DATASETS.get(dataset, {})
    generated = spec.get("generated", {})
    if "per_batch" in generated:
        samples = generated["per_batch"] * len(raw_formats.CIFAR_MEMBERS["train"])
    else:
        samples = generated.get("train", spec.get("samples"))
    if samples is None:
        return None
    return int(samples * (1 - (entry.get("validation_split") or 0)))


def on_gpus(cell):
    return int(cell["devices"]) > 0


class Timings:
    """What earlier records say of a backend's start and a model's steps, on
    GPUs or on the CPU of the machine that wrote them."""

    def __init__(self, records, gpus=True):
        self.records = [record for record in records if on_gpus(record) == gpus]
        # a downloaded or bundled dataset's size, as the records saw it
        self.sizes = {r["dataset"]: r["train_samples"] for r in records if r.get("train_samples")}

    def _of(self, task, backend=None, model=None, other_backends=False):
        return [
            record
            for record in self.records
            if record["task"] == task
            and (model is None or record["model"] == model)
            and (
                backend is None
                or (
                    record["backend"] != backend if other_backends else record["backend"] == backend
                )
            )
        ]

    def _nearest(self, task, backend, model):
        """The records to take a step's time from, and what they are: the
        same backend and model's; then, for a training step, the backend's
        other models (a small model's step on a GPU is launch-bound: the
        backend sets it), for an inference call the other backends' same
        model (its size sets the call); then the other of the two; then any."""
        same_model = (
            self._of(task, backend, model, other_backends=True),
            "other backends' {}".format(model),
        )
        same_backend = (self._of(task, backend), "{}'s other models".format(backend))
        nearer = [same_backend, same_model] if task == "train" else [same_model, same_backend]
        for records, basis in [
            (self._of(task, backend, model), "{}'s {}".format(backend, model)),
            *nearer,
            (self._of(task), "every backend's other models"),
        ]:
            if records:
                return records, "{} ({} record{})".format(
                    basis, len(records), "" if len(records) == 1 else "s"
                )
        return [], "no record"

    def start(self, backend):
        records = [r for r in self.records if r["backend"] == backend] or self.records
        if not records:
            return Estimate(0.0, "no record of a start")
        spans = [imported_results.run_seconds(r) - _timed_work(r) for r in records]
        whose = backend if records[0]["backend"] == backend else "every backend"
        return Estimate(max(0.0, statistics.median(spans)), "start: {}'s".format(whose))

    def training(self, backend, model, entry, dataset):
        records, basis = self._nearest("train", backend, model)
        samples = train_samples(dataset, entry)
        if samples is None:
            samples = self.sizes.get(dataset)
        if not records or samples is None:
            return Estimate(0.0, "work unknown: {}".format(basis if records else "no record"))
        steps = [
            r["steady_epoch_seconds"] / _steps(r["train_samples"], r["hyper"]["batch_size"])
            for r in records
            if r.get("steady_epoch_seconds") and r.get("train_samples")
        ]
        extra = [
            max(0.0, r["first_epoch_seconds"] - r["steady_epoch_seconds"])
            for r in records
            if r.get("first_epoch_seconds") and r.get("steady_epoch_seconds")
        ]
        step = statistics.median(steps) if steps else 0.0
        epochs = int(entry.get("epochs", 1))
        seconds = epochs * _steps(samples, int(entry["batch_size"])) * step
        seconds += statistics.median(extra) if extra else 0.0
        return Estimate(seconds, "step {:.1f} ms from {}".format(step * 1000, basis))

    def inference(self, backend, model, entry):
        records, basis = self._nearest("infer", backend, model)
        latencies = [r["latency_ms"]["p50"] / 1000.0 for r in records if r.get("latency_ms")]
        rates = [r["samples_per_second"] for r in records if r.get("samples_per_second")]
        if not (latencies and rates):
            return Estimate(0.0, "work unknown: {}".format(basis))
        calls = int(entry.get("warmup", 0)) + int(entry.get("latency_samples", 0))
        batches = int(entry.get("throughput_batches", 0)) * int(entry["batch_size"])
        seconds = calls * statistics.median(latencies) + batches / statistics.median(rates)
        return Estimate(seconds, "latency and throughput from {}".format(basis))

    def run(self, config, run):
        """The estimated seconds of ``run`` (a matrix.Run of ``config``),
        from its start to its record, and what the estimate rests on."""
        entry = matrix.workload(config, run.dataset, run.model)
        start = self.start(run.backend)
        if entry.get("task", "train") == "train":
            work = self.training(run.backend, run.model, entry, run.dataset)
        else:
            work = self.inference(run.backend, run.model, entry)
        basis = "{}; {}".format(start.basis, work.basis)
        modes = {r["compile"] for r in self.records if r["backend"] == run.backend}
        if run.compile != "auto" and modes and run.compile not in modes:
            basis += "; the backend's records are {}: compiling's own time is not in it".format(
                "/".join(sorted(modes))
            )
        return Estimate(start.seconds + work.seconds, basis)


class Estimator:
    """Timings on GPUs for GPU runs, on the CPU for the CPU's."""

    def __init__(self, sources):
        records = ok_records(sources)
        self.records = records
        self.timings = {gpus: Timings(records, gpus) for gpus in (True, False)}

    def run(self, config, run):
        return self.timings[on_gpus(run._asdict())].run(config, run)
