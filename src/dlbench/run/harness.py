"""One run: train a workload on one backend and write its run record.

The harness owns the clock, the data order and the record; an adapter owns
the framework. No framework is imported here at module level: the adapter
imports its framework after the threads are pinned. Importable on Python 3.6.

Usage (the supervisor calls this in a child process)::

    python -m dlbench.run.harness --spec JSON --data DATA.npz --record run.json --epochs epochs.csv

A spec of task ``check`` runs the equivalence check (dlbench.run.equivalence)
instead, its steps' losses in the record and in the CSV.
"""

import argparse
import csv
import json
import math
import os
import shutil
import socket
import statistics
import sys
import tempfile
import time
import traceback

from dlbench import catalog
from dlbench.host import runtime
from dlbench.models import initial_weights
from dlbench.record import contract
from dlbench.record.fields import RUNNING, Status
from dlbench.registry import Registry
from dlbench.run import (
    backends,
    compiles,
    energy,
    equivalence,
    faults,
    launch,
    op_profiling,
    probe,
    shared_weights,
)
from dlbench.run.run_data import (
    epoch_order,
    first_samples,
    load_dataset,
    take,
    validation_split,
)


def epoch_summary(seconds, compiles_per_epoch=None):
    """First epoch (graph build, JIT, autotune) apart from steady state, the
    median of the later epochs. With one epoch there is no steady state.
    Where the framework counts its compiles (``compiles_per_epoch``), a later
    epoch that compiled again is not steady state either, unless every
    later epoch did; ``steady_epochs`` says which epochs the median took."""
    if not seconds:
        return {"first_epoch_seconds": None, "steady_epoch_seconds": None}
    later = list(range(1, len(seconds)))
    if compiles_per_epoch is not None:
        quiet = [index for index in later if compiles_per_epoch[index] == 0]
        later = quiet or later
    found = {
        "first_epoch_seconds": seconds[0],
        "steady_epoch_seconds": statistics.median(seconds[i] for i in later) if later else None,
    }
    if later:
        found["steady_epochs"] = [index + 1 for index in later]
    return found


# The op profile's window (dlbench.run.op_profiling): train and infer leave its
# work and steps in their result under this key, and run profiles it once the
# record's figures are final.
OP_WINDOW = "op_window"


# The supervisor stamps the wall time at which it starts the run's process,
# so that the record can say how long the interpreter and the library took.
LAUNCHED_VARIABLE = "DLBENCH_LAUNCHED_AT"


def seconds_since_launch(environ=None):
    """Wall seconds since the supervisor started this process, or None."""
    stamp = (os.environ if environ is None else environ).get(LAUNCHED_VARIABLE)
    return None if stamp is None else max(0.0, time.time() - float(stamp))


def cold_start_total(cold, last):
    """Launch to the end of ``last`` (the first step, or the first inference
    call): the sum of the stages before the steady state, None where one is
    unknown."""
    order = ["launch_seconds", "framework_setup_seconds", "data_load_seconds"]
    order += ["model_build_seconds", last]
    parts = [cold.get(key) for key in order]
    return None if any(part is None for part in parts) else sum(parts)


def timed(adapter, call, *args):
    """``call(*args)`` on the clock, device work waited for before the clock
    is read. Returns the call's result and its wall time."""
    start = time.perf_counter()
    result = call(*args)
    adapter.synchronize()
    return result, time.perf_counter() - start


def timed_epoch(adapter, model, x, y, batch_size):
    """One training epoch on the clock: the adapter's result and wall time."""
    return timed(adapter, adapter.train_epoch, model, x, y, batch_size)


# The steady state's work runs inside these two functions, whose frames mark
# it in a profile's stacks (dlbench.analysis.profiles): the epochs after the
# first, the timed inference calls after the warm-up.
def steady_epoch(adapter, model, x, y, batch_size):
    """An epoch after the first, on the clock (as timed_epoch)."""
    return timed_epoch(adapter, model, x, y, batch_size)


def steady_predictions(adapter, model, samples):
    """The timed inference calls, one per sample batch: their wall times."""
    return [timed_predict(adapter, model, x) for x in samples]


def load_initial_weights(spec, adapter, model):
    """The run's shared initial weights (the spec names the file), loaded
    before the clock starts; a backend that cannot load them keeps its own
    initialisation and its record says why."""
    path = spec.get("initial_weights")
    if not path:
        return None
    loader = adapter.load_initial_weights  # None: the backend cannot load them
    if loader is None:
        return initial_weights.record_of(
            path, False, "{} cannot load shared weights yet".format(spec["backend"])
        )
    manifest, weights = shared_weights.read(path)
    trained = manifest.get("trained")
    try:
        loader(model, manifest, weights)
    except Exception as error:  # the run goes on from the backend's own draw
        reason = "could not load them: {}: {}".format(type(error).__name__, error)
        print("initial weights: " + reason, flush=True)
        return initial_weights.record_of(path, False, reason, trained)
    print("initial weights: loaded {}".format(path), flush=True)
    return initial_weights.record_of(path, True, trained=trained)


class EpochLog(object):
    """Per-epoch CSV written as the run goes, so progress is visible and a
    crashed run still shows how far it got."""

    def __init__(self, path, columns=contract.EPOCH_COLUMNS):
        self.handle = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.handle, fieldnames=columns)
        self.writer.writeheader()

    def add(self, row):
        self.writer.writerow(row)
        self.handle.flush()

    def close(self):
        self.handle.close()


def train(spec, adapter, data, epoch_log, place=(0, 0, 1), model=None, meter=None):
    """Train epoch by epoch in the shared data order, validating after each
    epoch (outside the clock) on the held-out part of the training data when
    the workload has a ``validation_split``, on the test split otherwise.
    ``place`` is this process' (rank, local rank, processes): with one
    process per device each trains on its share of every global batch.
    ``model``: one the caller built (and keeps), else the adapter builds it.
    ``meter``: the energy counters read around each timed epoch (dlbench.run.energy)."""
    hyper = spec["hyper"]
    batch_size = hyper["batch_size"]
    x_train, y_train = data["x_train"], data["y_train_onehot"]
    x_test, y_test = data["x_test"], data["y_test_onehot"]
    x_val, y_val = x_test, y_test
    if hyper.get("train_samples"):
        x_train, y_train = first_samples(x_train, y_train, hyper["train_samples"])
    held_out = bool(hyper.get("validation_split"))
    if held_out:
        (x_train, y_train), (x_val, y_val) = validation_split(
            x_train, y_train, hyper["validation_split"]
        )
    n_train = len(y_train)
    rank, _, processes = place
    replicas = launch.parallel_of(spec)["replicas"]
    process_batch = batch_size // processes

    built = time.perf_counter()
    if model is None:
        model = adapter.build(spec["model"], data["meta"], hyper)
    result = {"parameters": adapter.parameter_count(model), "epochs": []}
    result["initial_weights"] = load_initial_weights(spec, adapter, model)
    cold = {"model_build_seconds": time.perf_counter() - built}
    print(
        "{} on {}: {} parameters, {} training samples ({} held out for validation), "
        "batch {}, {} epochs".format(
            spec["model"],
            spec["backend"],
            result["parameters"],
            n_train,
            len(y_val) if held_out else 0,
            batch_size,
            hyper["epochs"],
        ),
        flush=True,
    )
    joules, compiled = [], []
    counter = adapter.compile_counter  # None where the framework does not report compiles
    for epoch in range(hyper["epochs"]):
        order, dropped = launch.shard_epoch(
            epoch_order(spec["seed"], epoch, n_train), batch_size, replicas, rank, processes
        )
        x_epoch, y_epoch = take(x_train, order), y_train[order]  # copied outside the clock
        before = meter.read() if meter else None
        compiles_before = counter.reading() if counter else None
        epoch_on_the_clock = steady_epoch if epoch else timed_epoch
        step, wall = epoch_on_the_clock(adapter, model, x_epoch, y_epoch, process_batch)
        if meter:
            joules.append(meter.joules(before, meter.read()))
        if counter:
            compiled.append(counter.since(compiles_before))
        row = {
            "epoch": epoch + 1,
            "seconds": step.get("seconds", wall),
            "wall_seconds": wall,
            "loss": step["loss"],
            "accuracy": step["accuracy"],
            "val_loss": None,
            "val_accuracy": None,
        }
        if spec.get("validate_every_epoch", True) or epoch + 1 == hyper["epochs"]:
            row["val_loss"], row["val_accuracy"] = adapter.evaluate(model, x_val, y_val, batch_size)
        epoch_log.add(row)
        result["epochs"].append(row)
        if epoch == 0:  # the first step (trace, compile, autotune), where the adapter timed it
            cold["first_step_seconds"] = adapter.first_step_seconds
            if cold["first_step_seconds"] is not None:
                cold["first_epoch_rest_seconds"] = row["seconds"] - cold["first_step_seconds"]
        print(
            "epoch {}/{}: {:.3f} s (call {:.3f} s) loss {:.4f} acc {:.4f} val_acc {}".format(
                row["epoch"],
                hyper["epochs"],
                row["seconds"],
                wall,
                row["loss"],
                row["accuracy"],
                "-" if row["val_accuracy"] is None else "{:.4f}".format(row["val_accuracy"]),
            ),
            flush=True,
        )

    seconds = [row["seconds"] for row in result["epochs"]]
    result["compiles"] = compiles.per_epoch(counter, compiled)
    result.update(epoch_summary(seconds, result["compiles"] and result["compiles"]["per_epoch"]))
    steady = result["steady_epoch_seconds"] or result["first_epoch_seconds"]
    trained = n_train - dropped  # per epoch, over all replicas
    result["samples_per_second"] = trained / steady if steady else None
    result["samples_dropped_per_epoch"] = dropped
    if meter:
        result["energy"] = energy.per_epoch(
            meter, joules, trained, seconds, result.get("steady_epochs")
        )
    result["replica_max_abs_weight_diff"] = adapter.replica_divergence(model)
    observe = adapter.recurrent_ops
    if observe and "recurrent_kernels" in adapter.applied_settings():  # outside every clock
        result["recurrent_ops"] = observe(model, take(x_test, slice(0, batch_size)))
    last = result["epochs"][-1]
    if held_out:
        result["test_loss"], result["test_accuracy"] = adapter.evaluate(
            model, x_test, y_test, batch_size
        )
        result["validation_samples"] = len(y_val)
    else:
        result["test_loss"], result["test_accuracy"] = last["val_loss"], last["val_accuracy"]
    result["train_samples"], result["test_samples"] = n_train, len(y_test)
    result["cold_start"] = cold
    if spec.get("op_profile") and processes == 1:  # run after the record's figures, off the clocks
        order, _ = launch.shard_epoch(
            epoch_order(spec["seed"], hyper["epochs"], n_train),
            batch_size,
            replicas,
            rank,
            processes,
        )
        steps = op_profiling.window_steps(
            steady and steady / math.ceil(n_train / float(batch_size)), len(order) // process_batch
        )
        x_window = take(x_train, order[: steps * process_batch])
        y_window = y_train[order[: steps * process_batch]]
        result[OP_WINDOW] = (
            lambda: adapter.train_epoch(model, x_window, y_window, process_batch),
            steps,
            model,
        )
    return result


def percentiles(values, points=(50, 90, 99)):
    """Nearest-rank percentiles: each is one of the measured values."""
    ordered = sorted(values)
    found = {}
    for point in points:
        rank = max(1, int(-(-point * len(ordered) // 100)))  # ceil without math
        found["p{}".format(point)] = ordered[rank - 1]
    return found


def timed_predict(adapter, model, x):
    return timed(adapter, adapter.predict, model, x)[1]


# The outputs a record keeps per sample of its predictions: every class
# probability of a classifier, the first features of a feature extractor
# (with the norm of all of them).
PREDICTION_COLUMNS = 64


def predictions(adapter, model, x, count, classifier=True):
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


def infer(spec, adapter, data, meter=None):
    """Latency of one sample (after warm-up) and throughput at the
    workload's batch size, on the test split, cycling through it; then,
    off the clock, the predictions on the first batch of the test split."""
    hyper = spec["hyper"]
    x = data["x_test"]
    batch_size = hyper["batch_size"]
    built = time.perf_counter()
    model = adapter.build(spec["model"], data["meta"], hyper)
    result = {"parameters": adapter.parameter_count(model)}
    result["initial_weights"] = load_initial_weights(spec, adapter, model)
    cold = {"model_build_seconds": time.perf_counter() - built}
    print(
        "{} on {}: {} parameters; latency over {} single samples after {} warm-up calls, "
        "throughput over {} batches of {}".format(
            spec["model"],
            spec["backend"],
            result["parameters"],
            hyper["latency_samples"],
            hyper["warmup"],
            hyper["throughput_batches"],
            batch_size,
        ),
        flush=True,
    )

    n = len(data["y_test"])

    def sample(i, size):
        start = (i * size) % n
        return take(x, [(start + j) % n for j in range(size)])  # copied outside the clock

    def warm_up(size):
        # At the shape about to be timed: some engines (OpenVINO) recompile
        # when the input shape changes.
        warmup = [timed_predict(adapter, model, sample(i, size)) for i in range(hyper["warmup"])]
        if size == 1 and warmup:  # the model's first call (trace, compile), then the rest
            cold["first_call_seconds"] = warmup[0]
            cold["warmup_rest_seconds"] = sum(warmup[1:])

    def measure(size, calls):
        return steady_predictions(adapter, model, (sample(i, size) for i in range(calls)))

    warm_up(1)
    latencies = measure(1, hyper["latency_samples"])
    warm_up(batch_size)
    before = meter.read() if meter else None
    batch_seconds = measure(batch_size, hyper["throughput_batches"])
    if meter:
        joules = meter.joules(before, meter.read())
        result["energy"] = energy.per_samples(
            meter, joules, batch_size * len(batch_seconds), sum(batch_seconds)
        )
    steady_batch = statistics.median(batch_seconds)
    result.update(
        {
            "latencies_ms": [1000.0 * t for t in latencies],
            "latency_ms": {key: 1000.0 * value for key, value in percentiles(latencies).items()},
            "batch_seconds": batch_seconds,
            "samples_per_second": batch_size / steady_batch,
            "seconds_per_1000_samples": 1000.0 * steady_batch / batch_size,
        }
    )
    result["latency_ms"]["mean"] = 1000.0 * statistics.mean(latencies)
    result["cold_start"] = cold
    result["predictions"] = predictions(
        adapter, model, x, min(batch_size, n), not adapter.registry.ends_in_features(spec["model"])
    )
    if spec.get("op_profile"):  # run after the record's figures (run), off every clock
        steps = op_profiling.window_steps(steady_batch, op_profiling.MAX_STEPS)
        window = [sample(i, batch_size) for i in range(steps)]
        result[OP_WINDOW] = (lambda: [adapter.predict(model, x) for x in window], steps, model)
    print(
        "latency p50 {p50:.3f} ms, p90 {p90:.3f} ms, p99 {p99:.3f} ms; throughput "
        "{0:.1f} samples/s ({1:.3f} s per 1000)".format(
            result["samples_per_second"], result["seconds_per_1000_samples"], **result["latency_ms"]
        ),
        flush=True,
    )
    return result


def error_text(frames=8, message_chars=1500):
    """The current exception for the record: its last frames and its
    message, a huge message (a framework printing whole arrays) cut in the
    middle so that the exception's type and both ends stay readable."""
    kind, error, trace = sys.exc_info()
    message = "".join(traceback.format_exception_only(kind, error))
    if len(message) > message_chars:
        half = message_chars // 2
        message = message[:half] + "\n[... cut ...]\n" + message[-half:]
    return "".join(traceback.format_tb(trace)[-frames:]) + message


MEMORY_ERRORS = (
    "MemoryError",
    "bad_alloc",
    "out of memory",
    "Out of memory",
    "OutOfMemory",
    "RESOURCE_EXHAUSTED",
    "Cannot allocate memory",
)


def name_memory_errors(text):
    """An error tail that shows the run ran out of memory says so first."""
    if any(sign in text for sign in MEMORY_ERRORS):
        return "out of memory: the run could not allocate what it needed\n" + text
    return text


def failure_reason(error, headline=None):
    """One line for tables: the exception (the error's last line), or
    ``headline`` (how the process ended); memory named first."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()] or ["?"]
    reason = headline or lines[-1]
    if lines[0].startswith("out of memory"):
        return "out of memory ({})".format(reason)
    return reason


def base_record(spec):
    record = {
        "record_version": contract.RECORD_VERSION,
        "machine": spec.get("machine"),
        "dataset": spec["dataset"],
        "model": spec["model"],
        "backend": spec["backend"],
    }
    for dimension in spec.get("dimensions", ["devices"]):
        record[dimension] = spec[dimension]
    if spec.get("custom_model"):
        record["custom_model"] = spec["custom_model"]
    record.update(
        {
            "repeat": spec["repeat"],
            "node": socket.gethostname(),
            "task": spec["task"],
            "seed": spec["seed"],
            "hyper": spec["hyper"],
            "parallel": launch.parallel_of(spec),
            "environment_name": spec.get("environment", spec["backend"]),
            "environment_check": spec.get("environment_check"),
            "status": RUNNING,
            "error": None,
            "reason": None,
            "started": runtime.utc_now(),
        }
    )
    return record


def adapter_settings(spec, backend):
    """The backend's settings and the precision the run computes in; a
    precision the backend (a catalog.Backend) has no mode for is refused,
    never run as float32."""
    precision = spec.get("precision", catalog.FLOAT32)
    reason = backend.precision_not_applicable(precision)
    if reason:
        raise ValueError("{} cannot run {}: {}".format(spec["backend"], precision, reason))
    return dict(spec.get("backend_settings") or {}, precision=precision)


def run_gpus(spec, parallel):
    """The GPU ids the run was given (its supervisor's CUDA_VISIBLE_DEVICES),
    none on the CPU or on emulated devices."""
    if not spec.get("devices") or parallel.get("accelerator") != "gpu":
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return [gpu.strip() for gpu in visible.split(",") if gpu.strip()]


def run(spec, data_path, record_path, epochs_path, registry=None, ops_path=None):
    """Run the task (train or infer) and write the record. A framework error
    becomes a ``failed`` record with the traceback's tail; the exit status
    says the same. ``registry``: the run's own (Registry.of_run) unless given.
    ``ops_path``: where the op profile goes (ops.json), when the spec asks
    for one (``op_profile``)."""
    record = base_record(spec)
    cold = {"launch_seconds": seconds_since_launch()}
    place = launch.process_place()
    rank, local_rank, processes = place
    launch.quiet_unless_first(rank)
    parallel = launch.parallel_of(spec)
    threads = launch.threads_per_process(runtime.resolve_threads(spec.get("threads")), parallel)
    available = runtime.available_cpus()
    chosen, claim = launch.cpus_of(available, threads, local_rank), None
    if processes == 1 and threads < len(available):
        chosen, claim = runtime.claim_cpus(threads, available)
    cpus = runtime.pin_to_cpus(threads, chosen)
    columns = equivalence.STEP_COLUMNS if spec["task"] == "check" else contract.EPOCH_COLUMNS
    epoch_log = EpochLog(epochs_path if rank == 0 else os.devnull, columns)
    adapter = None
    try:
        record["environment"] = dict(runtime.environment(threads, cpus), cpus_claim=claim)
        set_up = time.perf_counter()
        registry = registry or Registry.of_run(spec)
        settings = adapter_settings(spec, registry.backends[spec["backend"]])
        adapter = backends.adapter_for(spec["backend"], settings, registry)
        adapter.setup(
            threads=threads,
            seed=spec["seed"],
            devices=spec["devices"],
            parallel=dict(parallel, rank=rank, local_rank=local_rank, processes=processes),
        )
        record["environment"].update(adapter.versions())
        adapter.weights_follow = bool(spec.get("initial_weights"))
        cold["framework_setup_seconds"] = time.perf_counter() - set_up
        faults.inject(spec)
        loaded = time.perf_counter()
        data = load_dataset(data_path)
        cold["data_load_seconds"] = time.perf_counter() - loaded
        meter = energy.Meter(run_gpus(spec, parallel))
        if spec["task"] == "infer":
            record.update(infer(spec, adapter, data, meter))
        elif spec["task"] == "check":
            record.update(
                equivalence.check_steps(spec, adapter, data, epoch_log, load_initial_weights)
            )
        else:
            record.update(train(spec, adapter, data, epoch_log, place, meter=meter))
        if spec["task"] != "check":  # what came before the steady state, stage by stage
            cold.update(record["cold_start"])
            last = "first_call_seconds" if spec["task"] == "infer" else "first_step_seconds"
            cold["to_first_step_seconds"] = cold_start_total(cold, last)
            record["cold_start"] = cold
        window = record.pop(OP_WINDOW, None)
        record["settings"] = adapter.applied_settings()
        record["peak_device_memory_mb"] = adapter.peak_device_memory_mb()
        record["peak_host_memory_mb"] = runtime.peak_rss_mb()  # before the profiler's buffers
        record["status"] = Status.OK
        if ops_path and rank == 0:
            runtime.write_json_atomic(ops_path, op_profile(spec, adapter, window, processes))
        window = None  # and the model it holds, before the adapter closes (its process group)
    except Exception:  # any framework error: the record says what happened
        record["status"] = Status.FAILED
        record["error"] = name_memory_errors(error_text())
        record["reason"] = failure_reason(record["error"])
        traceback.print_exc()
    finally:
        epoch_log.close()
        if adapter is not None:
            adapter.close()
    if rank == 0:  # rank 0 writes the run's record
        if record["status"] == Status.OK:  # after the measurement, which it must not disturb
            record["environment"]["matmul_probe"] = probe.matmul_gflops()
        record.setdefault("peak_host_memory_mb", runtime.peak_rss_mb())
        record["finished"] = runtime.utc_now()
        record["load_average_at_end"] = list(os.getloadavg())
        runtime.write_json_atomic(record_path, record)
    runtime.release_cpus()
    return record


def op_profile(spec, adapter, window, processes):
    """ops.json of the run: the framework's profiler over the window, or why
    there is none. A profiler that fails costs the profile, not the run."""
    if not spec.get("op_profile"):
        return op_profiling.not_profiled("profile is off for this workload")
    if processes > 1:
        return op_profiling.not_profiled(
            "its devices run in one process each (torchrun): the op profile takes one process"
        )
    if window is None:
        return op_profiling.not_profiled("the {} task has no steady window".format(spec["task"]))
    workdir = tempfile.mkdtemp(prefix="dlbench-ops-")
    profiler = None
    try:
        work, steps, model = window
        profiler, reason = op_profiling.profiler_for(adapter, workdir, model)
        if reason:
            return op_profiling.not_profiled(reason, adapter.framework, profiler and profiler.name)
        started = time.perf_counter()
        found = op_profiling.profile_window(profiler, adapter, work, steps)
        # the whole profile's cost to the run: the profiler's start, the
        # window, its stop and the reading of what it recorded
        found["profile_seconds"] = time.perf_counter() - started
        print(
            "op profile: {} over {} steps, {:.3f} s, {} ops".format(
                found["profiler"], steps, found["window_seconds"], len(found["ops"])
            ),
            flush=True,
        )
        return found
    except Exception:  # the run's figures stand; its profile says what went wrong
        traceback.print_exc()
        return op_profiling.not_profiled(
            "the profiler failed: " + failure_reason(error_text()),
            adapter.framework,
            profiler and profiler.name,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def argument_parser(description):
    """The command line of a run, shared by the harness and its supervisor."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--spec", required=True, help="the run, as JSON")
    parser.add_argument("--data", required=True, help="the prepared dataset (.npz)")
    parser.add_argument("--record", required=True, help="where to write run.json")
    parser.add_argument("--epochs", required=True, help="where to write the per-epoch CSV")
    parser.add_argument("--ops", default=None, help="where to write the op profile (ops.json)")
    return parser


def main(argv=None):
    args = argument_parser(__doc__.splitlines()[0]).parse_args(argv)
    record = run(json.loads(args.spec), args.data, args.record, args.epochs, ops_path=args.ops)
    return 0 if record["status"] == Status.OK else 1


if __name__ == "__main__":
    sys.exit(main())
