"""One run: train a workload on one backend and write its run record.

The harness owns the clock, the data order and the record; an adapter owns
the framework. No framework is imported here at module level: the adapter
imports its framework after the threads are pinned. Importable on Python 3.6.

The clocked work runs here, inside ``steady_epoch`` and
``steady_predictions`` and, within them, ``timed``: a cell's python stacks
find the steady state by these frames of this file
(dlbench.analysis.python_stacks).
What comes before and after the clocks is training's (dlbench.run.training),
inference's (dlbench.run.inference) and the failed record's
(dlbench.run.failures).

Usage (the supervisor calls this in a child process)::

    python -m dlbench.run.harness --spec JSON --data DATA.npz --record run.json --epochs epochs.csv

A spec of task ``check`` runs the equivalence check (dlbench.run.equivalence)
instead, its steps' losses in the record and in the CSV.
"""

import argparse
import json
import os
import socket
import sys
import time
import traceback
from typing import Any, NamedTuple, Tuple

from dlbench.host import runtime
from dlbench.record import contract, fields
from dlbench.record.fields import INFER, RUNNING, Status
from dlbench.record.run_spec import CHECK, RunSpec
from dlbench.registry import Registry
from dlbench.run import (
    backends,
    energy,
    equivalence,
    failures,
    faults,
    inference,
    launch,
    op_profiling,
    probe,
    shared_weights,
    training,
)
from dlbench.run.run_data import epoch_order, load_dataset, take

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


class Process(NamedTuple):
    """This process of the run, as its task sees it."""

    # The per-epoch CSV it writes (a training.EpochLog; only rank 0's is a file).
    epoch_log: Any
    # (rank, local rank, processes) among the run's processes (launch.process_place):
    # with one process per device each trains on its share of every global batch.
    place: Tuple[int, int, int] = (0, 0, 1)
    # The energy counters read around the timed work (an energy.Meter; None: none).
    meter: Any = None


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


def timed_predict(adapter, model, x):
    return timed(adapter, adapter.predict, model, x)[1]


# The steady state's work runs inside these two functions, whose frames mark
# it in a cell's python stacks (dlbench.analysis.python_stacks): the epochs
# after the first, the timed inference calls after the warm-up.
def steady_epoch(adapter, model, x, y, batch_size):
    """An epoch after the first, on the clock (as timed_epoch)."""
    return timed_epoch(adapter, model, x, y, batch_size)


def steady_predictions(adapter, model, samples):
    """The timed inference calls, one per sample batch: their wall times."""
    return [timed_predict(adapter, model, x) for x in samples]


def built_model(spec, adapter, data, model=None):
    """The run's model (``model`` where the caller built it), loaded with
    the shared initial weights; the result's first entries and the cold
    start's ``model_build_seconds``."""
    built = time.perf_counter()
    if model is None:
        model = adapter.build(spec.model, data["meta"], spec.hyper)
    result = {"parameters": adapter.parameter_count(model)}
    result["initial_weights"] = shared_weights.load_initial_weights(spec, adapter, model)
    return model, result, {"model_build_seconds": time.perf_counter() - built}


def train(spec, adapter, data, process, model=None):
    """Train epoch by epoch in the shared data order, validating after each
    epoch (outside the clock) on the held-out part of the training data when
    the workload has a ``validation_split``, on the test split otherwise.
    ``process``: this process of the run (a Process). ``model``: one the
    caller built (and keeps), else the adapter builds it."""
    split = training.split(spec.hyper, data)
    model, result, cold = built_model(spec, adapter, data, model)
    training.describe(spec, result["parameters"], split)
    epochs = train_epochs(spec, adapter, model, split, process)
    cold.update(epochs.cold_start())
    result.update(training.figures(epochs, split, process.meter))
    batch_size = spec.hyper["batch_size"]
    result.update(training.scores(adapter, model, split, batch_size, epochs.rows[-1]))
    result["cold_start"] = cold
    if spec.op_profile and process.place[2] == 1:  # run after the record's figures, off the clocks
        steady = training.steady_seconds(result)
        result[op_profiling.WINDOW] = training.op_window(spec, adapter, model, split, steady)
    return result


def train_epochs(spec, adapter, model, split, process):
    """The epochs on the clock (training.Epochs), each validated after it
    where the spec says so (the last always), written to the epoch log;
    where the spec asks for evaluations every so many steps (its time to
    accuracy), their rows in ``epochs.evaluations``."""
    epochs, batch_size = training.Epochs(adapter.compile_counter), spec.hyper["batch_size"]
    if spec.evaluate_every:  # the first evaluation: before any step
        epochs.evaluations = training.Evaluations(spec.evaluate_every)
        epochs.evaluations.add(0, *adapter.evaluate(model, split.x_val, split.y_val, batch_size))
    rank, _, processes = process.place
    replicas, meter, counter = launch.parallel_of(spec)["replicas"], process.meter, epochs.counter
    for epoch in range(spec.hyper["epochs"]):
        order, epochs.dropped = launch.shard_epoch(
            epoch_order(spec.seed, epoch, split.samples), batch_size, replicas, rank, processes
        )
        x_epoch, y_epoch = take(split.x_train, order), split.y_train[order]  # copied off the clock
        before = meter.read() if meter else None
        compiles_before = counter.reading() if counter else None
        epoch_on_the_clock = steady_epoch if epoch else timed_epoch
        if epochs.evaluations is None:
            step, wall = epoch_on_the_clock(
                adapter, model, x_epoch, y_epoch, batch_size // processes
            )
        else:
            step, wall = evaluated_epoch(
                epoch_on_the_clock,
                adapter,
                model,
                (x_epoch, y_epoch, batch_size // processes),
                (split, batch_size),
                epochs.evaluations,
                epoch,
            )
        if meter:
            epochs.joules.append(meter.joules(before, meter.read()))
        if counter:
            epochs.compiled.append(counter.since(compiles_before))
        row = training.epoch_row(epoch, step, wall)
        if spec.validate_every_epoch or epoch + 1 == spec.hyper["epochs"]:
            row["val_loss"], row["val_accuracy"] = adapter.evaluate(
                model, split.x_val, split.y_val, batch_size
            )
        process.epoch_log.add(row)
        epochs.rows.append(row)
        if epoch == 0:  # the first step (trace, compile, autotune), where the adapter timed it
            epochs.first_step_seconds = adapter.first_step_seconds
        training.print_epoch(row, spec.hyper["epochs"])
    last = epochs.evaluations and epochs.evaluations.rows[-1]
    if last and last["step"] != epochs.evaluations.step:  # the trained model's, validated last
        epochs.evaluations.add(len(epochs.rows), row["val_loss"], row["val_accuracy"])
    return epochs


def evaluated_epoch(epoch_on_the_clock, adapter, model, epoch_data, held_out, evaluations, epoch):
    """One epoch on the clock in parts that end where an evaluation falls
    due (a training.Evaluations), each evaluation off the clock: the epoch's
    adapter result and wall time, as one call would give them.
    ``epoch_data``: the epoch's (x, y, this process' batch size);
    ``held_out``: (the split, the evaluation's batch size)."""
    x_epoch, y_epoch, batch = epoch_data
    split, batch_size = held_out
    parts = []
    for part, steps in training.chunks(len(y_epoch), batch, evaluations):
        step, wall = epoch_on_the_clock(adapter, model, take(x_epoch, part), y_epoch[part], batch)
        parts.append((step, wall, steps))
        if evaluations.trained(steps, step.get("seconds", wall)):
            loss, accuracy = adapter.evaluate(model, split.x_val, split.y_val, batch_size)
            evaluations.add(epoch + 1, loss, accuracy)
    return training.joined(parts)


def infer(spec, adapter, data, process):
    """Latency of one sample (after warm-up) and throughput at the
    workload's batch size, on the test split, cycling through it; then,
    off the clock, the predictions on the first batch of the test split.
    ``process``: this process of the run (a Process: its meter)."""
    hyper, batch_size, meter = spec.hyper, spec.hyper["batch_size"], process.meter
    model, result, cold = built_model(spec, adapter, data)
    inference.describe(spec, result["parameters"])
    samples = inference.Samples(data["x_test"], len(data["y_test"]))
    # Each warm-up is at the shape about to be timed: some engines (OpenVINO)
    # recompile when the input shape changes.
    warmup = [timed_predict(adapter, model, x) for x in samples.batches(1, hyper["warmup"])]
    if warmup:  # the model's first call (trace, compile), then the rest
        cold.update(first_call_seconds=warmup[0], warmup_rest_seconds=sum(warmup[1:]))
    latencies = steady_predictions(adapter, model, samples.batches(1, hyper["latency_samples"]))
    for x in samples.batches(batch_size, hyper["warmup"]):
        timed_predict(adapter, model, x)
    before = meter.read() if meter else None
    batches = samples.batches(batch_size, hyper["throughput_batches"])
    batch_seconds = steady_predictions(adapter, model, batches)
    if meter:
        joules = meter.joules(before, meter.read())
        result["energy"] = energy.per_samples(
            meter, joules, batch_size * len(batch_seconds), sum(batch_seconds)
        )
    result.update(inference.figures(latencies, batch_seconds, batch_size))
    result["cold_start"] = cold
    classifier = not adapter.registry.ends_in_features(spec.model)
    count = min(batch_size, samples.count)
    result["predictions"] = inference.predictions(adapter, model, samples.x, count, classifier)
    if spec.op_profile:  # run after the record's figures (run), off every clock
        window = inference.op_window(adapter, model, samples, batch_size, batch_seconds)
        result[op_profiling.WINDOW] = window
    inference.print_figures(result)
    return result


def base_record(spec):
    """The record of the run ``spec`` (a RunSpec) before it ran: its cell,
    repeat and settings, status ``running``."""
    record = {
        "record_version": contract.RECORD_VERSION,
        "machine": spec.machine,
        "dataset": spec.dataset,
        "model": spec.model,
        "backend": spec.backend,
    }
    for dimension in spec.dimensions:
        record[dimension] = getattr(spec, dimension)
    if spec.custom_model:
        record["custom_model"] = spec.custom_model
    record.update(
        {
            "repeat": spec.repeat,
            "node": socket.gethostname(),
            "task": spec.task,
            "seed": spec.seed,
            "hyper": spec.hyper,
            "parallel": launch.parallel_of(spec),
            "environment_name": spec.backend if spec.environment is None else spec.environment,
            "environment_check": spec.environment_check,
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
    reason = backend.precision_not_applicable(spec.precision)
    if reason:
        raise ValueError("{} cannot run {}: {}".format(spec.backend, spec.precision, reason))
    return dict(spec.backend_settings or {}, precision=spec.precision)


def run_gpus(spec, parallel):
    """The GPU ids the run was given (its supervisor's CUDA_VISIBLE_DEVICES),
    none on the CPU or on emulated devices."""
    if not spec.devices or parallel.get("accelerator") != "gpu":
        return []
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    return [gpu.strip() for gpu in visible.split(",") if gpu.strip()]


def run(spec, data_path, record_path, epochs_path, registry=None, ops_path=None):
    """Run the task of ``spec`` (a RunSpec: train, infer or check) and write
    the record. A framework error becomes a ``failed`` record with the
    traceback's tail; the exit status says the same. ``registry``: the
    run's own (Registry.of_run) unless given. ``ops_path``: where the op
    profile goes (ops.json), when the spec asks for one (``op_profile``)."""
    record = base_record(spec)
    cold = {"launch_seconds": seconds_since_launch()}
    place = launch.process_place()
    rank, local_rank, processes = place
    launch.quiet_unless_first(rank)
    parallel = launch.parallel_of(spec)
    threads = launch.threads_per_process(runtime.resolve_threads(spec.threads), parallel)
    cpus, claim = launch.pin_cpus(threads, local_rank, processes)
    columns = equivalence.STEP_COLUMNS if spec.task == CHECK else contract.EPOCH_COLUMNS
    log = training.EpochLog(epochs_path if rank == 0 else os.devnull, columns)
    adapter = None
    try:
        record["runtime"] = dict(runtime.observed(threads, cpus), cpus_claim=claim)
        set_up = time.perf_counter()
        registry = registry or Registry.of_run(spec.as_json())
        settings = adapter_settings(spec, registry.backends[spec.backend])
        adapter = backends.adapter_for(spec.backend, settings, registry)
        record["runtime"].update(start_framework(spec, adapter, threads, parallel, place))
        cold["framework_setup_seconds"] = time.perf_counter() - set_up
        faults.inject(spec)
        record.update(measure(spec, adapter, data_path, Process(log, place), cold))
        measured(record, spec, adapter, ops_path if rank == 0 else None, processes)
    except Exception:  # any framework error: the record says what happened
        failures.mark_failed(record)
        traceback.print_exc()
    finally:
        log.close()
        if adapter is not None:
            adapter.close()
    if rank == 0:  # rank 0 writes the run's record
        write_record(record, record_path)
    runtime.release_cpus()
    return record


def start_framework(spec, adapter, threads, parallel, place):
    """The adapter's framework started for this process (``place``) on
    ``threads`` and its share of the devices; its versions, for the record."""
    rank, local_rank, processes = place
    adapter.setup(
        threads=threads,
        seed=spec.seed,
        devices=spec.devices,
        parallel=dict(parallel, rank=rank, local_rank=local_rank, processes=processes),
    )
    versions = adapter.versions()
    adapter.weights_follow = bool(spec.initial_weights)
    return versions


def measure(spec, adapter, data_path, process, cold):
    """The task's result: the data loaded, the task run on it, and (but for
    a check) the cold start's stages before the steady state, from ``cold``
    (the stages before the data) on."""
    loaded = time.perf_counter()
    data = load_dataset(data_path)
    cold["data_load_seconds"] = time.perf_counter() - loaded
    process = process._replace(meter=energy.Meter(run_gpus(spec, launch.parallel_of(spec))))
    if spec.task == CHECK:
        return equivalence.check_steps(
            spec, adapter, data, process.epoch_log, shared_weights.load_initial_weights
        )
    if spec.task == INFER:
        found, last = infer(spec, adapter, data, process), "first_call_seconds"
    else:
        found, last = train(spec, adapter, data, process), "first_step_seconds"
    cold.update(found["cold_start"])
    cold["to_first_step_seconds"] = cold_start_total(cold, last)
    found["cold_start"] = cold
    return found


def measured(record, spec, adapter, ops_path, processes):
    """``record`` of a run whose task ended: its settings, peak memory and
    status ``ok``; then the op profile over the window the task left, into
    ``ops_path`` (rank 0's, where the workflow asks for one)."""
    window = record.pop(op_profiling.WINDOW, None)
    record["settings"] = adapter.applied_settings()
    fields.put(record, "peak_device_memory_mb", adapter.peak_device_memory_mb())
    # before the profiler's buffers
    fields.put(record, "peak_host_memory_mb", runtime.peak_rss_mb())
    record["status"] = Status.OK
    if ops_path:
        runtime.write_json_atomic(ops_path, op_profiling.of_run(spec, adapter, window, processes))
    # returning drops the window, and the model it holds, before the adapter
    # closes (its process group)


def write_record(record, record_path):
    """The run's record, completed: the machine's matrix probe after a run
    that ended ok, its peak memory where the run left none, when it ended."""
    if record["status"] == Status.OK:  # after the measurement, which it must not disturb
        record["runtime"]["matmul_probe"] = probe.matmul_gflops()
    if fields.value_of(record, "peak_host_memory_mb") is None:
        fields.put(record, "peak_host_memory_mb", runtime.peak_rss_mb())
    record["finished"] = runtime.utc_now()
    record["load_average_at_end"] = list(os.getloadavg())
    runtime.write_json_atomic(record_path, record)


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
    spec = RunSpec.from_json(json.loads(args.spec))
    record = run(spec, args.data, args.record, args.epochs, ops_path=args.ops)
    return 0 if record["status"] == Status.OK else 1


if __name__ == "__main__":
    sys.exit(main())
