"""A cell's python stacks (dlbench.run.stack_sampling,
dlbench.analysis.python_stacks): each sample inside the clock belongs to one
layer, a slow data feed is feeding data, the layers add up to the samples,
and a run that cannot be sampled says why. The workflow's python stacks of
real backends: test_workflow_e2e."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from dlbench.analysis import python_stacks
from dlbench.run import stack_sampling, supervise
from testkit import REPO

CLOCK = "<module> (run.py:1);run (dlbench/run/harness.py:520);train (dlbench/run/harness.py:200)"
STEADY = (
    CLOCK + ";steady_epoch (dlbench/run/harness.py:110);timed_epoch (dlbench/run/harness.py:103)"
)
TIMED = STEADY + ";timed (dlbench/run/harness.py:95)"


def stack(*inner):
    return tuple(python_stacks.frame(text) for text in (TIMED + ";" + ";".join(inner)).split(";"))


@pytest.mark.parametrize(
    "inner, layer",
    [
        (
            [
                "train_epoch (dlbench/run/backends/keras_adapter.py:300)",
                "fit (keras/src/backend/torch/trainer.py:250)",
                "__next__ (keras/src/trainers/epoch_iterator.py:80)",
                "clock_nanosleep (libc.so.6)",
            ],
            "data",
        ),
        (
            [
                "fit (keras/src/backend/torch/trainer.py:250)",
                "conv2d (torch/nn/functional.py:10)",
                "at::native::conv (libtorch_cpu.so)",
                "mkl_blas_avx512_sgemm_kernel_0 (libtorch_cpu.so)",
            ],
            "kernels",
        ),
        (
            [
                "train_epoch (dlbench/run/backends/native_jax_adapter.py:200)",
                "block_until_ready (jax/_src/array.py:600)",
                "syscall (libc.so.6)",
                "futex_wait (libc.so.6)",
            ],
            "waiting",
        ),
        (
            [
                "fit (keras/src/backend/torch/trainer.py:250)",
                "__call__ (keras/src/layers/layer.py:800)",
                "_PyObject_Call (libpython3.11.so.1.0)",
            ],
            "keras",
        ),
        (
            [
                "fit (keras/src/backend/torch/trainer.py:250)",
                "forward (dlbench/models/layers/torch_layers.py:40)",
            ],
            "workload",
        ),
        (
            [
                "train_epoch (dlbench/run/backends/native_torch_adapter.py:230)",
                "backward (torch/_tensor.py:600)",
                "torch::autograd::Engine::execute (libtorch_cpu.so)",
            ],
            "framework",
        ),
        (["train_epoch (dlbench/run/backends/native_torch_adapter.py:230)"], "harness"),
        (
            [
                "fit (keras/src/backend/jax/trainer.py:250)",
                "block (jax/_src/dispatch.py:90)",
                "wait (threading.py:320)",
            ],
            "waiting",
        ),
        (
            [
                "train_epoch (dlbench/run/backends/native_torch_adapter.py:230)",
                "_rows (dlbench/run/backends/native_torch_adapter.py:120)",
                "at::index (libtorch_cpu.so)",
            ],
            "data",
        ),
    ],
    ids=[
        "keras data adapter",
        "mkl",
        "futex",
        "keras",
        "workload",
        "torch",
        "harness",
        "python wait",
        "rows",
    ],
)
def test_each_sample_inside_the_clock_belongs_to_one_layer(inner, layer):
    assert python_stacks.layer_of(python_stacks.clocked(stack(*inner))) == layer


def test_samples_outside_the_clock_do_not_count(tmp_path):
    path = tmp_path / "stacks.txt"
    lines = [
        CLOCK + ";build (dlbench/run/backends/keras_adapter.py:90) 50",  # the build
        STEADY + ";take (dlbench/run/run_data.py:90) 7",  # a copy before the clock
        TIMED + ";train_epoch (dlbench/run/backends/native_torch_adapter.py:230) 3",
        TIMED + ";x (torch/nn/modules/module.py:1);mkl_sgemm (libtorch_cpu.so) 5",
    ]
    path.write_text("\n".join(lines) + "\n")
    found = python_stacks.layers_of(python_stacks.read_stacks(path))
    assert found["samples"] == 8
    assert found["layers"] == {"harness": 3, "kernels": 5}
    assert found["hot"]["mkl_sgemm (libtorch_cpu.so) from x"] == 5


def sampled_run(tmp_path, digits_npz, delay):
    """A real training run (the numpy backend of the tests) under py-spy, as
    the workflow samples one; its stacks and record."""
    from test_harness import spec_for

    spec = spec_for("numpy-test", epochs=3)._replace(backend_settings={"feed_delay": delay})
    stacks, record = tmp_path / "stacks.txt", tmp_path / "run.json"
    runner = (
        "import json, sys\n"
        "from conftest import NUMPY_BACKEND\n"
        "from dlbench.record.run_spec import RunSpec\n"
        "from dlbench.registry import Registry\n"
        "from dlbench.run import harness\n"
        "registry = Registry(backends={NUMPY_BACKEND: {'family': 'numpy', 'framework': 'numpy',\n"
        "    'adapter_module': 'numpy_adapter', 'tasks': ('train', 'infer')}})\n"
        "spec = RunSpec.from_json(json.loads(sys.argv[1]))\n"
        "harness.run(spec, sys.argv[2], sys.argv[3], sys.argv[4], registry=registry)\n"
    )
    harness_command = [sys.executable, "-c", runner, json.dumps(spec.as_json()), str(digits_npz)]
    harness_command += [str(record), str(tmp_path / "epochs.csv")]
    py_spy = str(Path(sys.executable).parent / "py-spy")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO / "tests")]))
    done = subprocess.run(
        stack_sampling.command(py_spy, str(stacks), harness_command),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert json.loads(record.read_text())["status"] == "ok", done.stdout + done.stderr
    return python_stacks.layers_of(python_stacks.read_stacks(stacks)), json.loads(
        record.read_text()
    )


def test_a_slow_data_feed_is_feeding_data_and_the_layers_add_up(tmp_path, digits_npz):
    """py-spy samples the harness' process as the workflow's python stacks
    run does: a feed that sleeps 20 ms a batch is most of the clocked time,
    the layers' samples add up to the clocked samples, and a backend without
    Keras has no Keras in its python stacks."""
    found, record = sampled_run(tmp_path, digits_npz, delay=0.02)
    assert found["samples"] > 20
    assert sum(found["layers"].values()) == found["samples"]
    assert found["layers"].get("data", 0) / found["samples"] > 0.5, found["layers"]
    assert "keras" not in found["layers"]
    row = python_stacks.cell_row(found, {"reason": None}, record, {"steady_epoch_seconds": 0.5})
    shares = [row[layer + "_share"] for layer in python_stacks.LAYERS]
    assert sum(shares) == pytest.approx(1.0)
    steps = math.ceil(record["train_samples"] / record["hyper"]["batch_size"])
    assert row["ms_per_step"] == pytest.approx(1000 * 0.5 / steps)
    assert sum(row[layer + "_ms"] for layer in python_stacks.LAYERS) == pytest.approx(
        row["ms_per_step"]
    )


def test_a_run_that_cannot_be_sampled_says_why_and_still_runs(tmp_path):
    stacks, described = str(tmp_path / "stacks.txt"), str(tmp_path / "sampling.json")
    command = ["python", "-m", "dlbench.run.harness"]
    torchrun = {"launch": "process_per_device", "devices": 2}
    assert supervise._sampled(command, torchrun, "py-spy", stacks, described) == command
    assert "one process each" in json.loads(Path(described).read_text())["reason"]
    nowhere = str(tmp_path / "no-py-spy")
    one = {"launch": "one_process", "devices": 0}
    assert supervise._sampled(command, one, nowhere, stacks, described) == command
    supervise._describe_sampling(nowhere, stacks, described)
    found = json.loads(Path(described).read_text())
    assert found["reason"] == "no py-spy here" and found["samples"] == 0
    assert found["sampler"] is None and os.path.exists(stacks)


def test_the_gaps_say_which_layers_hold_the_difference():
    cell = {c: "x" for c in python_stacks.matrix.CELL}
    rows = []
    for backend, ms, shares in (
        ("fast", 10.0, {"kernels": 0.9, "framework": 0.1}),
        ("slow", 30.0, {"kernels": 0.3, "framework": 0.1, "data": 0.6}),
    ):
        row = dict(cell, backend=backend, task="train", samples=100, ms_per_step=ms, reason=None)
        row["sampled_over_timed"] = 1.0
        for layer in python_stacks.LAYERS:
            row[layer + "_share"] = shares.get(layer, 0.0)
            row[layer + "_ms"] = shares.get(layer, 0.0) * ms
        rows.append(row)
    found = python_stacks.table(rows)
    key = python_stacks.key_of(found.iloc[1])
    gaps = python_stacks.gaps(found, {key: {"sleep (libc.so.6) from __getitem__": 60, "mkl": 30}})
    (gap,) = gaps.to_dict("records")
    assert (gap["backend"], gap["fastest"], gap["times_slower"]) == ("slow", "fast", 3.0)
    # 18 of the 20 extra ms are feeding data, 0 net in kernels (9 ms each), +1 in framework
    assert gap["where"].startswith("+90 % in feeding data, +10 % in framework runtime")
    assert gap["hot_spots"].startswith("sleep (libc.so.6) from __getitem__ (67 %)")
    assert isinstance(python_stacks.shown(found), pd.DataFrame)
