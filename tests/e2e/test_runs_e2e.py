"""Single runs outside Snakemake, in the session's venvs, for what a
workflow run cannot show: a GPU run on a machine without one, and the end
of a run of several torchrun processes."""

import json
import os
import subprocess

from dlbench.plan import matrix, run_spec
from dlbench.run import launch
from testkit import RUN_TIMEOUT_S
from workflows import load_test_config, supervised_run

# Installed as sitecustomize: each torchrun rank writes the names of its
# threads when the interpreter begins to shut down (atexit runs before the
# shutdown's last garbage collection).
THREADS_AT_EXIT = """
import atexit, os

def _write_threads():
    rank = os.environ.get("RANK")
    if rank is None:
        return  # torchrun's agent
    tasks = "/proc/self/task"
    names = [open(os.path.join(tasks, t, "comm")).read().strip() for t in os.listdir(tasks)]
    path = os.path.join(os.environ["THREADS_AT_EXIT"], "rank" + rank)
    with open(path, "w") as handle:
        handle.write("\\n".join(names))

atexit.register(_write_threads)
"""


def mlp_spec(config, backend, devices):
    # one thread, as every run of the tests' config
    run = matrix.Run("digits", "mlp", backend, devices=devices, threads=1, repeat=1)
    spec = run_spec.spec(config, run).as_json()
    spec["hyper"]["epochs"] = 2
    return spec


def test_gpu_request_on_a_cpu_build_fails_honestly(built_workflow, tmp_path):
    """A GPU run whose framework sees no GPU fails with the reason instead
    of timing the CPU (here: a made-up GPU id and JAX's CPU build)."""
    config = dict(load_test_config(), accelerator="gpu")
    spec = mlp_spec(config, "keras-jax", 1)
    spec["environment"] = "keras-jax"  # the CPU build, where a GPU box would take .cuda
    result = supervised_run(
        built_workflow,
        spec,
        tmp_path,
        env={"CUDA_VISIBLE_DEVICES": "7"},
        extra=["--gpu-lock-dir", str(tmp_path / "locks")],
    )
    assert result["status"] == "failed"
    assert "devices=1 asks for 1 GPUs; jax sees" in result["error"]
    assert result["parallel"]["gpu_ids"] == ["7"]


def test_torchrun_ranks_free_their_process_group_before_shutdown(built_workflow, tmp_path):
    """Every rank torchrun starts has destroyed its gloo process group, and
    the group's threads are gone, before the interpreter shuts down. Keras'
    torch train step keeps its DistributedDataParallel wrapper in a reference
    cycle; a group freed only by the shutdown's garbage collection aborted a
    rank in 5 to 10 % of runs ("terminate called without an active
    exception", SIGABRT or SIGSEGV) and failed the whole run."""
    workdir = built_workflow.path
    spec = mlp_spec(load_test_config(), "keras-torch", 2)
    built_workflow.build("results/data/digits.npz", spec["initial_weights"])
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(THREADS_AT_EXIT)
    record = tmp_path / "run.json"
    arguments = ["--spec", json.dumps(spec), "--data", "results/data/digits.npz"]
    arguments += ["--record", str(record), "--epochs", str(tmp_path / "epochs.csv")]
    python = str(built_workflow.venv("keras-torch") / "bin/python")
    environment = dict(
        os.environ,
        PYTHONPATH="{}:{}".format(hooks, workdir / "src"),
        THREADS_AT_EXIT=str(tmp_path),
        **launch.environment(spec["parallel"]),
    )
    done = subprocess.run(
        launch.command(python, spec["parallel"], arguments, log_dir=str(tmp_path / "torchrun")),
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(record.read_text())["status"] == "ok"
    for rank in ("0", "1"):
        threads = (tmp_path / ("rank" + rank)).read_text().split()
        assert threads and not [name for name in threads if "gloo" in name], (rank, threads)


def test_a_tensorflow_run_leaves_no_autograph_bytecode_behind(built_workflow, tmp_path):
    """TensorFlow's autograph writes each function it converts as a module in
    the temporary folder and removes the module at exit, not the bytecode
    Python compiled from it; the adapter sweeps that after TensorFlow's own
    clean-up. Without the sweep this run of native TensorFlow left 11 such
    files (Keras 3's run on TensorFlow none)."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    spec = mlp_spec(load_test_config(), "native-tensorflow", 0)
    result = supervised_run(built_workflow, spec, tmp_path, env={"TMPDIR": str(temporary)})
    assert result["status"] == "ok"
    assert not list(temporary.rglob("__autograph_generated_file*"))
