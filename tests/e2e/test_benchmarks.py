"""Every script in benchmarks/ runs, with small arguments, in the session's
built workflow (its venvs, prepared data and results, as `make smoke-full` leaves
them in the repository) and prints its figures. The figures themselves are
not judged here: they depend on the machine."""

import os
import subprocess
import sys

import pytest

from dlbench.plan import paths
from testkit import INVOCATION_TIMEOUT_S, REPO

SCRIPTS = sorted(path.name for path in (REPO / "benchmarks").glob("*.py"))
HELPERS = {"runs.py"}  # imported by the others, not run
# Run by another module's test, on what it needs.
ELSEWHERE = {"report_time.py": "test_workflow_e2e.py::test_report"}
# The runs' spec from the tests' config, as the built workflow's own runs:
# one thread (the scripts' default, config/smoke-full.yaml, gives them every core).
TESTS_CONFIG = ("--config", "config/test.yaml")


def benchmark(workdir, script, *args, python=sys.executable, env=None):
    """Runs benchmarks/<script> of ``workdir``; its standard output."""
    done = subprocess.run(
        [python, str(workdir / "benchmarks" / script), *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=INVOCATION_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(done.stdout)
    return done.stdout


@pytest.fixture(scope="module")
def keras_jax_on_digits(built_workflow):
    """The built workflow with keras-jax's venv, the digits data and the
    shared initial weights of digits/mlp."""
    built_workflow.venv("keras-jax")
    weights = paths.WEIGHTS.format(
        dataset="digits", model="mlp", seed=built_workflow.config["seed"]
    )
    built_workflow.build("results/data/digits.npz", weights)
    return built_workflow.path


def test_every_benchmark_script_has_a_test():
    tested = {name.split("test_", 1)[1] + ".py" for name in globals() if name.startswith("test_")}
    untested = set(SCRIPTS) - HELPERS - set(ELSEWHERE) - tested
    assert not untested, sorted(untested)


def test_compare_timings(tmp_path):
    """Two runs' metrics: the ratio per cell, and the test where both have repeats."""
    import pandas as pd

    cell = dict(machine="m", dataset="digits", model="mlp", devices=0, threads=1)
    cell.update(precision="float32", compile="auto", versions="pinned", task="train")
    for name, seconds in (("before", [1.0, 1.1, 0.9]), ("after", [2.0, 2.1, 1.9])):
        folder = tmp_path / name
        folder.mkdir()
        rows = [
            dict(cell, backend=backend, repeat=repeat + 1, status="ok", steady_epoch_seconds=value)
            for backend in ("keras-jax", "native-torch")
            for repeat, value in enumerate(seconds)
        ]
        pd.DataFrame(rows).assign(latency_p50_ms=None).to_csv(folder / "metrics.csv", index=False)
    out = benchmark(REPO, "compare_timings.py", str(tmp_path / "before"), str(tmp_path / "after"))
    assert "cells in both: 2" in out and "median 2.000" in out
    assert "2 cells with repeats tested; moved at 5 % (Holm): 2" in out


def test_cudnn_lenet():
    """It needs a GPU with cuDNN, CuPy and torch (its figures: docs/results-h200.md).
    Without cuDNN it stops at loading the libraries, saying where it looked."""
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "cudnn_lenet.py"), "--calls", "1"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO / "src")),
        capture_output=True,
        text=True,
        timeout=INVOCATION_TIMEOUT_S,
    )
    assert done.returncode != 0
    assert "libcublas and libcudnn not found in" in done.stderr


def test_dryrun_time():
    out = benchmark(REPO, "dryrun_time.py", "--runs", "10", "--times", "1", "--threads", "1,all")
    assert out.startswith("snakemake -n: ") and "median ratio" in out


def test_scheduler_spin():
    out = benchmark(REPO, "scheduler_spin.py", "--jobs", "4", "--seconds", "0.1", "--times", "1")
    assert out.count("max-jobs-per-timespan ") == 2 and "median CPU" in out


def test_harness_overhead(keras_jax_on_digits):
    out = benchmark(
        keras_jax_on_digits,
        "harness_overhead.py",
        "--backend",
        "keras-jax",
        "--tile",
        "1",
        "--pairs",
        "2",
        python=str(keras_jax_on_digits / ".venvs/keras-jax/bin/python"),
        env=dict(os.environ, PYTHONPATH=str(keras_jax_on_digits / "src")),
    )
    assert out.startswith("keras-jax: ") and "median paired ratio" in out


def test_jit_choice(keras_jax_on_digits):
    out = benchmark(
        keras_jax_on_digits,
        "jit_choice.py",
        *TESTS_CONFIG,
        "--workload",
        "digits/mlp",
        "--backend",
        "keras-jax",
        "--epochs",
        "2",
        # four steps an epoch: without jit_compile JAX runs op by op
        *("--train-samples", "512"),
        "--pairs",
        "1",
    )
    assert "digits/mlp keras-jax jit_compile=True: median" in out
    assert "digits/mlp keras-jax jit_compile=False: median" in out


def test_devices_overhead(keras_jax_on_digits):
    out = benchmark(
        keras_jax_on_digits,
        "devices_overhead.py",
        *TESTS_CONFIG,
        *("--backends", "keras-jax", "--pairs", "1"),
    )
    assert "| keras-jax | " in out


def test_run_stability(keras_jax_on_digits):
    out = benchmark(
        keras_jax_on_digits,
        "run_stability.py",
        *TESTS_CONFIG,
        *("--run", "digits/mlp/keras-jax/0", "--times", "1"),
    )
    assert "digits/mlp/keras-jax/0: 1 of 1 runs ok, 0 failed" in out


def test_torch_compile_shapes(built_workflow):
    """On the CPU with LeNet and a batch of 8: each compiled variant compiles
    one graph per shape (the default's second one dynamic), with the
    environment's Inductor cache, as the runs have it."""
    venv = built_workflow.venv("native-torch")
    out = benchmark(
        built_workflow.path,
        "torch_compile_shapes.py",
        *("--model", "lenet", "--batch", "8", "--calls", "3", "--rounds", "1"),
        python=str(venv / "bin" / "python"),
        env=dict(os.environ, PYTHONPATH=str(built_workflow.path / "src")),
    )
    assert out.startswith("lenet on CPU (torch ")
    assert "Inductor's cache: {} (".format(venv / "torchinductor-cache") in out
    rows = [line.split() for line in out.splitlines() if line.startswith("1 ")]
    assert [row[-1] for row in rows] == ["0", "2", "2"], out
    assert "compiled, static shapes: eager / compiled" in out


def test_prepare_image_folder():
    """A small folder: its size on disk, the preparation's time and peak
    memory beside the imports' and the whole array's, the listing's time."""
    printed = benchmark(REPO, "prepare_image_folder.py", "--images", "60", "--size", "16")
    assert "60 JPG images of 16x16 RGB in 10 class folders" in printed
    for figure in ("size on disk:", "prepared file (float32):", "planning probe (listing):"):
        assert figure in printed
    assert "peak memory, preparation:" in printed and "the array whole, in memory:" in printed
