"""The harness and its run record, driven by a real numpy training loop."""

import csv
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import numpy_adapter
from dlbench.host import runtime
from dlbench.record.run_spec import RunSpec
from dlbench.run import compiles, harness, inference, run_data, training
from testkit import REPO

RECORD_KEYS = {
    "dataset",
    "model",
    "backend",
    "devices",
    "repeat",
    "task",
    "seed",
    "hyper",
    "status",
    "error",
    "parameters",
    "epochs",
    "first_epoch_seconds",
    "steady_epoch_seconds",
    "samples_per_second",
    "test_accuracy",
    "test_loss",
    "peak_host_memory_mb",
    "peak_device_memory_mb",
    "runtime",
    "settings",
    "started",
    "finished",
}


def spec_for(backend, epochs=3):
    return RunSpec.from_json(spec_json(backend, epochs))


def spec_json(backend, epochs=3):
    """A training run's spec as the workflow writes it (RunSpec.as_json)."""
    return {
        "machine": "test-machine",
        "dataset": "digits",
        "model": "mlp",
        "backend": backend,
        "devices": 0,
        "threads": 1,
        "precision": "float32",
        "compile": "auto",
        "versions": "pinned",
        "dimensions": ["devices", "threads", "precision", "compile", "versions"],
        "repeat": 1,
        "task": "train",
        "seed": 7,
        "validate_every_epoch": True,
        "hyper": {
            "batch_size": 64,
            "epochs": epochs,
            "loss": "categorical_crossentropy",
            "optimizer": {"name": "sgd", "learning_rate": 0.5},
        },
        "backend_settings": {"note": "recorded as given"},
    }


def test_epoch_summary_separates_the_first_epoch():
    summary = training.epoch_summary([9.0, 2.0, 4.0, 3.0])
    assert summary == {
        "first_epoch_seconds": 9.0,
        "steady_epoch_seconds": 3.0,
        "steady_epochs": [2, 3, 4],
    }
    assert training.epoch_summary([5.0])["steady_epoch_seconds"] is None


def test_an_epoch_that_compiled_again_is_not_steady_state():
    # keras-jax on an H200 (the GPU campaign): epoch 2 compiled again, 1 s of 0.03
    seconds = [6.6, 0.99, 0.027, 0.026]
    summary = training.epoch_summary(seconds, compiles_per_epoch=[3, 1, 0, 0])
    assert summary["steady_epochs"] == [3, 4]
    assert summary["steady_epoch_seconds"] == pytest.approx(0.0265)
    # every later epoch compiled: they are all there is, and the record says which
    every = training.epoch_summary(seconds, compiles_per_epoch=[3, 1, 1, 1])
    assert every["steady_epochs"] == [2, 3, 4] and every["steady_epoch_seconds"] == 0.027


def test_compiles_are_counted_per_epoch_with_what_compiled_again():
    counter = compiles.Counter("a test's counter")
    readings = []
    for names in (["train_step", "train_step"], ["train_step"], []):
        before = counter.reading()
        for name in names:
            counter.functions.append(name)
            counter.seconds += 0.5
        readings.append(counter.since(before))
    block = compiles.per_epoch(counter, readings)
    assert block["per_epoch"] == [2, 1, 0]
    assert block["seconds_per_epoch"] == [1.0, 0.5, 0.0]
    assert block["functions_after_first_epoch"] == ["train_step"]
    assert compiles.per_epoch(None, readings) is None


def test_epoch_order_depends_on_seed_and_epoch_only():
    first = run_data.epoch_order(42, 0, 100)
    assert np.array_equal(first, run_data.epoch_order(42, 0, 100))
    assert not np.array_equal(first, run_data.epoch_order(42, 1, 100))
    assert not np.array_equal(first, run_data.epoch_order(43, 0, 100))
    assert sorted(first) == list(range(100))


def test_record_of_a_successful_run(tmp_path, numpy_backend, digits_npz, numpy_registry):
    record_path, epochs_path = tmp_path / "run.json", tmp_path / "epochs.csv"
    harness.run(
        spec_for(numpy_backend),
        str(digits_npz),
        str(record_path),
        str(epochs_path),
        registry=numpy_registry,
    )
    record = json.loads(record_path.read_text())
    assert RECORD_KEYS <= set(record)
    assert record["status"] == "ok" and record["error"] is None
    assert record["parameters"] == 28 * 28 * 10 + 10
    assert [epoch["epoch"] for epoch in record["epochs"]] == [1, 2, 3]
    seconds = [epoch["seconds"] for epoch in record["epochs"]]
    assert record["first_epoch_seconds"] == seconds[0]
    assert record["steady_epoch_seconds"] == pytest.approx(np.median(seconds[1:]))
    assert record["samples_per_second"] == pytest.approx(1438 / record["steady_epoch_seconds"])
    assert record["test_accuracy"] > 0.8  # softmax regression learns digits
    assert record["settings"] == {"note": "recorded as given", "precision": "float32"}
    assert record["energy"]["gpu_not_measured"] == "no GPU in this run"
    cold = record["cold_start"]  # called in-process: no supervisor stamped a launch
    assert cold["launch_seconds"] is None and cold["to_first_step_seconds"] is None
    stages = ["framework_setup_seconds", "data_load_seconds", "model_build_seconds"]
    assert all(cold[stage] >= 0 for stage in stages + ["first_epoch_rest_seconds"]), cold
    assert 0 < cold["first_step_seconds"] <= seconds[0]
    assert cold["first_step_seconds"] + cold["first_epoch_rest_seconds"] == pytest.approx(
        seconds[0]
    )
    found = record["runtime"]
    # one CPU, whichever no other run on the machine held (runtime.claim_cpus)
    assert found["threads"] == 1 and len(found["cpus_pinned"]) == 1
    assert set(found["cpus_pinned"]) <= set(os.sched_getaffinity(0))
    assert found["framework"] == "numpy" and found["cpu_model"]
    assert found["workflow_commit"]
    with open(epochs_path) as handle:
        rows = list(csv.DictReader(handle))
    assert [float(row["seconds"]) for row in rows] == seconds


def test_same_seed_same_numbers(tmp_path, numpy_backend, digits_npz, numpy_registry):
    accuracies = []
    for name in ("a", "b"):
        harness.run(
            spec_for(numpy_backend),
            str(digits_npz),
            str(tmp_path / name),
            str(tmp_path / "e"),
            registry=numpy_registry,
        )
        accuracies.append(
            [e["val_accuracy"] for e in json.loads((tmp_path / name).read_text())["epochs"]]
        )
    assert accuracies[0] == accuracies[1]


def test_train_samples_trains_on_the_first_samples_only(
    tmp_path, numpy_backend, digits_npz, numpy_registry
):
    """A workload's ``train_samples``: the first samples of the training
    split make every epoch (the test split is whole); more than the split
    holds fails the run with both numbers."""
    spec = spec_for(numpy_backend, epochs=2)
    spec.hyper["train_samples"] = 320
    record = harness.run(
        spec,
        str(digits_npz),
        str(tmp_path / "r.json"),
        str(tmp_path / "e"),
        registry=numpy_registry,
    )
    assert record["status"] == "ok", record["error"]
    assert (record["train_samples"], record["test_samples"]) == (320, 359)
    assert record["samples_per_second"] == pytest.approx(320 / record["steady_epoch_seconds"])
    spec.hyper["train_samples"] = 5000
    record = harness.run(
        spec,
        str(digits_npz),
        str(tmp_path / "r.json"),
        str(tmp_path / "e"),
        registry=numpy_registry,
    )
    assert record["status"] == "failed"
    assert "train_samples 5000 is more than the 1438 samples" in record["error"]


def test_a_framework_error_becomes_a_failed_record(tmp_path, numpy_backend, numpy_registry):
    """The record says what failed, and the adapter is closed all the same
    (torchrun's process group must not outlive a failed run either)."""
    record_path = tmp_path / "run.json"
    missing = str(tmp_path / "no-such-data.npz")
    closed = numpy_adapter.Adapter.closed
    record = harness.run(
        spec_for(numpy_backend),
        missing,
        str(record_path),
        str(tmp_path / "e.csv"),
        registry=numpy_registry,
    )
    assert record["status"] == "failed"
    assert "no-such-data.npz" in record["error"]
    assert json.loads(record_path.read_text())["status"] == "failed"
    assert numpy_adapter.Adapter.closed == closed + 1


def test_supervisor_writes_a_failed_record_and_exits_zero(tmp_path, digits_npz):
    """An unknown backend fails inside the child; the job itself succeeds,
    and leaves no file of its own open to the garbage collector."""
    record_path = tmp_path / "run.json"
    command = [
        sys.executable,
        "-W",
        "always::ResourceWarning",
        "-m",
        "dlbench.run.supervise",
        "--spec",
        json.dumps(spec_json("keras-none")),
        "--data",
        str(digits_npz),
        "--record",
        str(record_path),
        "--epochs",
        str(tmp_path / "e"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ResourceWarning" not in done.stderr, done.stderr
    record = json.loads(record_path.read_text())
    assert record["status"] == "failed" and "keras-none" in record["error"]


def test_atomic_write_leaves_no_partial_file(tmp_path):
    target = tmp_path / "run.json"
    with pytest.raises(TypeError):  # keys that cannot be sorted fail half-way through
        runtime.write_json_atomic(str(target), {"status": "ok", 1: "x"})
    assert not target.exists()


def test_thread_environment_pins_every_pool():
    env = runtime.thread_environment(3)
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "3"
    assert env["TF_NUM_INTRAOP_THREADS"] == "3" and env["TF_NUM_INTEROP_THREADS"] == "1"
    assert runtime.resolve_threads("all") == len(runtime.available_cpus())
    assert runtime.resolve_threads(10**6) == len(runtime.available_cpus())


def infer_spec(backend):
    hyper = {"batch_size": 32, "warmup": 2, "latency_samples": 25, "throughput_batches": 4}
    return spec_for(backend)._replace(task="infer", model="lenet", hyper=hyper)


def test_percentiles_are_measured_values():
    values = list(range(1, 101))
    assert inference.percentiles(values) == {"p50": 50, "p90": 90, "p99": 99}
    assert inference.percentiles([3.0]) == {"p50": 3.0, "p90": 3.0, "p99": 3.0}


def test_record_of_an_inference_run(tmp_path, numpy_backend, digits_npz, numpy_registry):
    record_path = tmp_path / "run.json"
    record = harness.run(
        infer_spec(numpy_backend),
        str(digits_npz),
        str(record_path),
        str(tmp_path / "e"),
        registry=numpy_registry,
    )
    assert record["status"] == "ok", record["error"]
    assert len(record["latencies_ms"]) == 25 and len(record["batch_seconds"]) == 4
    latency = record["latency_ms"]
    assert 0 < latency["p50"] <= latency["p90"] <= latency["p99"]
    assert latency["p50"] in record["latencies_ms"]
    median_batch = float(np.median(record["batch_seconds"]))
    assert record["samples_per_second"] == pytest.approx(32 / median_batch)
    assert record["seconds_per_1000_samples"] == pytest.approx(1000 * median_batch / 32)
    assert "epochs" not in record
    cold = record["cold_start"]
    assert cold["first_call_seconds"] > 0 and cold["warmup_rest_seconds"] >= 0
    assert "first_step_seconds" not in cold


def test_several_named_inputs_and_a_validation_split(tmp_path, numpy_backend, numpy_registry):
    """bAbI's two inputs travel as a dict through order, batches and the
    record; the last 5 % of the training data validate (as Keras'
    validation_split), the test split is scored at the end."""
    from dlbench.data import preparation, stand_ins

    archive = tmp_path / "babi.tar.gz"
    stand_ins.babi_archive(archive, train=200, test=60)
    preparation.prepare("babi_tiny", {"babi_tasks_1-20_v1-2.tar.gz": archive}, tmp_path / "b.npz")
    spec = spec_for(numpy_backend)._replace(dataset="babi_tiny", model="babi_rnn")
    spec = spec._replace(
        hyper=dict(
            spec.hyper, validation_split=0.05, optimizer={"name": "sgd", "learning_rate": 0.01}
        )
    )
    record = harness.run(
        spec,
        str(tmp_path / "b.npz"),
        str(tmp_path / "r.json"),
        str(tmp_path / "e"),
        registry=numpy_registry,
    )
    assert record["status"] == "ok", record["error"]
    assert (record["train_samples"], record["validation_samples"], record["test_samples"]) == (
        190,
        10,
        60,
    )
    loaded = run_data.load_dataset(str(tmp_path / "b.npz"))
    meta = loaded["meta"]
    assert sorted(loaded["x_train"]) == ["question", "story"]
    assert meta["input_shape"] == {
        "story": [meta["story_length"]],
        "question": [meta["query_length"]],
    }
    assert (
        record["parameters"] == (meta["story_length"] + meta["query_length"] + 1) * meta["classes"]
    )


def test_validation_split_takes_the_tail_as_keras_does():
    x = {"a": np.arange(20), "b": np.arange(20) * 10}
    (train_x, train_y), (val_x, val_y) = run_data.validation_split(x, np.arange(20), 0.05)
    assert list(val_y) == [19] and list(val_x["b"]) == [190] and len(train_y) == 19
    with pytest.raises(ValueError, match="no data"):
        run_data.validation_split(x, np.arange(20), 0.99)


@pytest.mark.skipif(runtime.autogroup_nice() is None, reason="this kernel has no autogroups")
def test_a_supervised_run_keeps_the_supervisors_priority():
    """The run is a session of its own (killed as one), so it gets a new
    autogroup; it must not run at nice 0 beside a niced workflow."""
    script = """
import os, subprocess
from dlbench.host import runtime
from dlbench.run import supervise
print(os.nice(7), runtime.autogroup_nice())
for setup in (None, supervise._child_setup(None)):
    print(subprocess.run(["cat", "/proc/self/autogroup"], start_new_session=True,
                         preexec_fn=setup, capture_output=True, text=True).stdout.split()[-1])
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    own, group, plain, supervised = (int(nice) for nice in done.stdout.split())
    assert own >= 7
    assert plain == 0  # what a new session gets without the supervisor's care
    assert supervised == max(own, group)


def test_a_priority_the_run_did_not_get_is_in_its_record_with_the_reason(
    tmp_path, monkeypatch, smoke_config
):
    """Where the session group's nice value cannot be set (no autogroups,
    or the kernel refuses), the run still runs, and the runtime it
    records says what was asked, what it got and why not. The run's
    interpreter stands in for the harness: it records its runtime."""
    from dlbench.plan import matrix, run_spec
    from dlbench.run import supervise

    unwritable = tmp_path / "autogroup"
    unwritable.mkdir()  # writing it fails: IsADirectoryError, an OSError
    monkeypatch.setattr(runtime, "AUTOGROUP", str(unwritable))
    seen = tmp_path / "seen.json"
    records = (
        "import json, os, sys\nfrom dlbench.host import runtime\n"
        "json.dump({'runtime': runtime.observed(1, [0]), "
        "'note': os.environ.get(runtime.PRIORITY_NOTE_VARIABLE)}, open(sys.argv[1], 'w'))\n"
    )
    python = tmp_path / "python"
    python.write_text('#!/bin/sh\nexec {} -c "{}" {}\n'.format(sys.executable, records, seen))
    python.chmod(0o755)
    spec = run_spec.spec(smoke_config, matrix.Run("digits", "mlp", "keras-torch", repeat=1))
    record_path = tmp_path / "run.json"
    supervise.supervise(
        spec, "unused.npz", str(record_path), str(tmp_path / "e.csv"), python=str(python)
    )
    found = json.loads(seen.read_text())
    asked = os.getpriority(os.PRIO_PROCESS, 0)  # no session group here: the process' own
    assert found["runtime"]["priority"] == {
        "setting": "session group nice (autogroup)",
        "asked": asked,
        "applied": None,
        "not_applied": "{} not written: [Errno 21] Is a directory: {!r}".format(
            unwritable, str(unwritable)
        ),
    }
    assert not os.path.exists(found["note"])  # the supervisor's note, gone with the run
    # a process no supervisor started records no priority asked
    assert runtime.observed(1, [0])["priority"] is None


def test_overlapping_runs_of_fewer_threads_than_cpus_pin_to_different_cpus(tmp_path):
    """Two one-thread runs at a time (equivalence checks, concurrent_cpu_runs)
    each claim a CPU of their own; a third, with none left, shares and says
    so. The claim ends with the process that held it."""
    claim = (
        "import json, sys\nfrom dlbench.host import runtime\n"
        "print(json.dumps(runtime.claim_cpus(1, [0, 1], sys.argv[1])), flush=True)\n"
        "sys.stdin.read()\n"
    )
    holders = [
        subprocess.Popen(
            [sys.executable, "-c", claim, str(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO / "src",
        )
        for _ in range(2)
    ]
    first, second = (json.loads(holder.stdout.readline()) for holder in holders)
    assert {first[0][0], second[0][0]} == {0, 1}
    assert first[1].startswith("claimed") and second[1].startswith("claimed")
    cpus, how = runtime.claim_cpus(1, [0, 1], str(tmp_path))
    assert cpus == [0] and how.startswith("shared"), how
    holders[0].communicate("")  # it exits: its CPU is free again
    cpus, how = runtime.claim_cpus(1, [0, 1], str(tmp_path))
    assert cpus == first[0] and how.startswith("claimed"), how
    runtime.release_cpus()
    assert runtime.claim_cpus(1, first[0], str(tmp_path))[1].startswith("claimed")
    runtime.release_cpus()
    holders[1].communicate("")


def test_the_cold_start_adds_up_from_the_supervisors_stamp_to_the_first_step():
    stamp = {harness.LAUNCHED_VARIABLE: repr(time.time() - 2.5)}
    assert harness.seconds_since_launch(stamp) == pytest.approx(2.5, abs=0.5)
    assert harness.seconds_since_launch({}) is None
    cold = {"launch_seconds": 1.0, "framework_setup_seconds": 2.0, "data_load_seconds": 0.5}
    cold.update(model_build_seconds=0.25, first_step_seconds=4.0, first_call_seconds=None)
    assert harness.cold_start_total(cold, "first_step_seconds") == 7.75
    assert harness.cold_start_total(cold, "first_call_seconds") is None


def test_evaluations_every_so_many_steps_leave_the_steps_as_they_were(
    tmp_path, numpy_backend, digits_npz, numpy_registry
):
    """A time-to-accuracy run trains its epochs in parts between evaluations:
    the same steps in the same order (the same losses as one call an epoch),
    evaluated off the clock every 5 steps and at step 0, the training clock
    summing the parts."""
    records = {}
    for name, every in (("whole", None), ("parts", 5)):
        spec = spec_for(numpy_backend)._replace(evaluate_every=every)
        harness.run(
            spec,
            str(digits_npz),
            str(tmp_path / name),
            str(tmp_path / (name + ".csv")),
            registry=numpy_registry,
        )
        records[name] = json.loads((tmp_path / name).read_text())
    whole, parts = records["whole"], records["parts"]
    assert "evaluations" not in whole and parts["evaluate_every"] == 5
    for one, split in zip(whole["epochs"], parts["epochs"]):
        assert split["loss"] == pytest.approx(one["loss"], rel=1e-9)
        assert split["val_accuracy"] == one["val_accuracy"]
    steps_per_epoch = -(-1438 // 64)  # 23, the last batch short
    steps = [row["step"] for row in parts["evaluations"]]
    # every 5 steps, and the trained model's (the last epoch's validation)
    assert steps == list(range(0, 3 * steps_per_epoch + 1, 5)) + [3 * steps_per_epoch]
    assert parts["evaluations"][-1]["val_accuracy"] == parts["epochs"][-1]["val_accuracy"]
    assert [row["epoch"] for row in parts["evaluations"]][:7] == [0, 1, 1, 1, 1, 2, 2]
    clock = [row["training_seconds"] for row in parts["evaluations"]]
    assert clock[0] == 0 and clock == sorted(clock)
    assert clock[-1] == pytest.approx(sum(epoch["seconds"] for epoch in parts["epochs"]))
    assert parts["evaluations"][0]["val_accuracy"] < 0.3  # before any step: chance
    assert max(row["val_accuracy"] for row in parts["evaluations"]) > 0.8
