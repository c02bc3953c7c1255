"""The devices dimension without a GPU: which cells exist on N devices, the
batch rule, how a run is launched and sharded, GPU assignment under SLURM,
and the scaling figures."""

import json
import os
import re

import numpy as np
import pandas as pd
import pytest

from dlbench import catalog
from dlbench.analysis import collect
from dlbench.host import gpus
from dlbench.plan import matrix, run_spec
from dlbench.run import launch

KERAS3 = {"keras-tensorflow", "keras-jax", "keras-torch"}
# keras-mxnet: compile(context=[...]); native: DDP, MirroredStrategy, sharding
DATA_PARALLEL = KERAS3 | {"keras-mxnet", "native-torch", "native-tensorflow", "native-jax"}


def test_gpu_cells_are_the_backends_with_a_gpu_build(smoke_config):
    smoke_config["devices"] = [0, 1, 2]
    runs = matrix.runs(smoke_config)
    on_gpus = {(run.model, run.backend, run.devices) for run in runs if run.devices}
    assert {b for m, b, d in on_gpus if m == "mlp"} == DATA_PARALLEL
    # inference is timed on one device
    assert {(b, d) for m, b, d in on_gpus if m == "lenet"} == {(b, 1) for b in DATA_PARALLEL}
    reasons = {
        (c["backend"], c["model"], c["devices"]): c["reason"]
        for c in matrix.not_applicable_cells(smoke_config)
    }
    assert "trains on one device" in reasons[("keras2-theano", "mlp", 1)]
    assert "trains on one device" in reasons[("keras2-cntk", "mlp", 2)]
    assert reasons[("keras-openvino", "lenet", 1)] == "n/a (no NVIDIA GPU build)"
    assert reasons[("keras-jax", "lenet", 2)] == "n/a (inference is timed on one device)"
    # every cell is either run or shown as n/a with its reason
    cells = {(r.dataset, r.model, r.backend, r.devices) for r in runs}
    left_out = {
        (c["dataset"], c["model"], c["backend"], c["devices"])
        for c in matrix.not_applicable_cells(smoke_config)
    }
    assert not cells & left_out
    expected = sum(
        len(matrix.workload_backends(smoke_config, entry)) for entry in smoke_config["workloads"]
    ) * len(smoke_config["devices"])
    assert len(cells | left_out) == expected


def test_emulated_devices_run_training_only(smoke_config):
    smoke_config["devices"] = [2]
    smoke_config["accelerator"] = "emulated-cpu"
    runs = matrix.runs(smoke_config)
    assert {run.backend for run in runs} == DATA_PARALLEL
    assert all(matrix.workload(smoke_config, r.dataset, r.model)["task"] == "train" for r in runs)


def test_environment_is_the_cuda_build_on_gpus_only():
    assert catalog.BACKENDS["keras-torch"].environment(0, "gpu") == "keras-torch"
    assert catalog.BACKENDS["keras-torch"].environment(2, "gpu") == "keras-torch.cuda"
    assert catalog.BACKENDS["keras-torch"].environment(2, "emulated-cpu") == "keras-torch"


@pytest.mark.parametrize("scaling", ["fixed_global", "per_device"])
def test_batch_rule_is_applied_and_recorded(smoke_config, scaling):
    smoke_config["devices"] = [0, 4]
    smoke_config["batch_scaling"] = scaling
    entry = matrix.workload(smoke_config, "digits", "mlp")
    lr = entry["optimizer"]["learning_rate"]
    cpu = run_spec.spec(smoke_config, matrix.Run("digits", "mlp", "keras-jax", devices=0, repeat=1))
    four = run_spec.spec(
        smoke_config, matrix.Run("digits", "mlp", "keras-jax", devices=4, repeat=1)
    )
    assert cpu.hyper["batch_size"] == 128 and cpu.parallel["replicas"] == 1
    block = four.parallel
    assert (
        block["batch_scaling"] == scaling and block["batch_rule"] == run_spec.BATCH_RULES[scaling]
    )
    assert block["launch"] == "one_process" and block["replicas"] == 4
    if scaling == "fixed_global":
        assert (block["global_batch"], block["per_device_batch"]) == (128, 32)
        assert four.hyper["optimizer"]["learning_rate"] == lr
    else:
        assert (block["global_batch"], block["per_device_batch"]) == (512, 128)
        assert four.hyper["optimizer"]["learning_rate"] == pytest.approx(4 * lr)
    assert block["learning_rate"] == four.hyper["optimizer"]["learning_rate"]
    torch = run_spec.spec(
        smoke_config, matrix.Run("digits", "mlp", "keras-torch", devices=4, repeat=1)
    )
    assert torch.parallel["launch"] == "process_per_device"


@pytest.mark.parametrize("backend", ["keras-torch", "native-torch", "keras-jax", "native-jax"])
@pytest.mark.parametrize("accelerator", ["gpu", "emulated-cpu"])
def test_one_device_runs_the_single_device_program(smoke_config, backend, accelerator):
    """One device is run as a user runs one GPU: one process, no launcher,
    no data-parallel wrapper; two devices start the backend's own launcher."""
    smoke_config.update(devices=[1, 2], accelerator=accelerator)
    one, two = (
        run_spec.spec(smoke_config, matrix.Run("digits", "mlp", backend, devices=n, repeat=1))
        for n in (1, 2)
    )
    block = one.parallel
    assert (block["launch"], block["method"]) == ("one_process", catalog.SINGLE_DEVICE)
    assert (block["devices"], block["accelerator"]) == (1, accelerator)
    assert launch.command("py", block, ["--x"]) == ["py", "-m", "dlbench.run.harness", "--x"]
    assert not launch.distributes(block) and launch.emulated_devices(block) == 0
    assert two.parallel["launch"] == catalog.BACKENDS[backend]["data_parallel"]["launch"]
    assert two.parallel["method"] == catalog.BACKENDS[backend]["data_parallel"]["method"]
    assert launch.distributes(two.parallel)
    assert launch.emulated_devices(two.parallel) == (2 if accelerator == "emulated-cpu" else 0)


def test_launch_command_per_launcher():
    one = {"devices": 2, "replicas": 2, "launch": "one_process", "accelerator": "gpu"}
    per = dict(one, launch="process_per_device")
    assert launch.command("py", one, ["--x"]) == ["py", "-m", "dlbench.run.harness", "--x"]
    torchrun = launch.command("py", per, ["--x"])
    assert torchrun[:3] == ["py", "-m", "torch.distributed.run"]
    assert "--nproc-per-node=2" in torchrun
    assert torchrun[-3:] == ["-m", "dlbench.run.harness", "--x"]
    logs = launch.command("py", per, ["--x"], log_dir="/run/logs")
    assert logs[logs.index("--log-dir") + 1] == "/run/logs"
    assert launch.command("py", one, ["--x"], log_dir="/run/logs") == launch.command(
        "py", one, ["--x"]
    )
    assert launch.threads_per_process(8, per) == 4 and launch.threads_per_process(8, one) == 8
    assert launch.threads_per_process(1, per) == 1
    assert launch.environment(launch.ON_THE_CPU) == {
        "CUDA_VISIBLE_DEVICES": "",
        "JAX_PLATFORMS": "cpu",
    }
    assert launch.environment(one, ["3", "5"]) == {"CUDA_VISIBLE_DEVICES": "3,5"}
    assert launch.environment(dict(one, accelerator="emulated-cpu"))["CUDA_VISIBLE_DEVICES"] == ""
    assert launch.cpus_of([0, 1, 2, 3], 2, 1) == [2, 3]
    assert launch.cpus_of([0, 1], 1, 1) == [1]


@pytest.mark.parametrize("threads", [1, 2])
def test_xla_reads_every_flag_a_run_sets(monkeypatch, threads):
    """XLA stops reading XLA_FLAGS at the first token that is not a flag:
    the emulated device count must reach it on one thread as on two (a
    stray option once hid it, and JAX saw one device)."""
    from dlbench.run.backends import frameworks

    monkeypatch.setenv("XLA_FLAGS", "")
    flags = frameworks.pin_jax(threads, emulated_devices=2)["xla_flags"].split()
    assert all(flag.startswith("--") for flag in flags), flags
    assert "--xla_force_host_platform_device_count=2" in flags
    assert ("--xla_cpu_multi_thread_eigen=false" in flags) is (threads == 1)


def test_shards_cover_every_global_batch_in_order():
    order = np.random.RandomState(0).permutation(1001)
    batch, world = 128, 4
    shards = [launch.shard_epoch(order, batch, world, rank, world) for rank in range(world)]
    dropped = {d for _, d in shards}
    assert dropped == {1001 % world}
    kept = order[: 1001 - 1]
    # step k of every process together is exactly global batch k, in order
    per_process = batch // world
    rebuilt = []
    for step in range(-(-len(kept) // batch)):
        for shard, _ in shards:
            rebuilt.extend(shard[step * per_process : (step + 1) * per_process])
    assert np.array_equal(np.asarray(rebuilt), kept)
    # one process driving every device only drops the remainder
    alone, dropped_alone = launch.shard_epoch(order, batch, world, 0, 1)
    assert np.array_equal(alone, kept) and dropped_alone == 1


def test_slurm_jobs_take_their_own_gpus_without_locks(tmp_path):
    environ = {"SLURM_JOB_ID": "7", "CUDA_VISIBLE_DEVICES": "0,1"}
    allocation = gpus.assign(2, lock_dir=str(tmp_path), environ=environ)
    assert allocation.ids == ["0", "1"] and allocation.assigned_by == "SLURM"
    assert not list(tmp_path.iterdir())
    with pytest.raises(gpus.GPUsUnavailable, match="the SLURM job has 2"):
        gpus.assign(4, lock_dir=str(tmp_path), environ=environ)


def test_local_runs_take_distinct_gpus(tmp_path):
    environ = {"CUDA_VISIBLE_DEVICES": "4,5,6"}
    first = gpus.assign(2, lock_dir=str(tmp_path), environ=environ)
    second = gpus.assign(1, lock_dir=str(tmp_path), environ=environ)
    assert set(first.ids).isdisjoint(second.ids)
    assert "lock files" in first.assigned_by
    with pytest.raises(gpus.GPUsUnavailable):
        gpus.assign(1, lock_dir=str(tmp_path), timeout_s=0.2, environ=environ)
    first.release()
    second.release()


def test_scaling_efficiency_against_the_fewest_devices():
    rows = [
        {
            "dataset": "d",
            "model": "m",
            "backend": b,
            "machine": "m1",
            "devices": n,
            "threads": "all",
            "precision": "float32",
            "compile": "auto",
            "versions": "pinned",
            "task": "train",
            "samples_per_second": sps,
        }
        for b, n, sps in [
            ("x", 0, 50.0),
            ("x", 1, 100.0),
            ("x", 2, 150.0),
            ("x", 4, 200.0),
            ("y", 2, 10.0),
        ]
    ]
    frame = collect.scaling(pd.DataFrame(rows))
    x = frame[frame["backend"] == "x"].set_index("devices")
    assert np.isnan(x.loc[0, "speedup"])  # the CPU is other hardware
    assert x.loc[2, "speedup"] == pytest.approx(1.5)
    assert x.loc[2, "scaling_efficiency"] == pytest.approx(0.75)
    assert x.loc[4, "scaling_efficiency"] == pytest.approx(0.5)
    assert frame[frame["backend"] == "y"]["scaling_efficiency"].isna().all()  # one count only


def test_a_gpu_run_without_gpus_fails_with_the_reason(tmp_path, monkeypatch, smoke_config):
    """No silent CPU fallback: the supervisor records why, before any framework starts."""
    from dlbench.run import supervise

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    smoke_config["devices"] = [2]
    spec = run_spec.spec(
        smoke_config, matrix.Run("digits", "mlp", "keras-jax", devices=2, repeat=1)
    )
    record_path = tmp_path / "run.json"
    supervise.supervise(spec, "unused.npz", str(record_path), str(tmp_path / "epochs.csv"))
    record = json.loads(record_path.read_text())
    assert record["status"] == "failed"
    assert record["error"] == "GPUs unavailable: a run asks for 2 GPUs; only 0 are visible (none)"
    assert record["parallel"]["global_batch"] == 128


def plan(workdir, *config):
    """The bench jobs a dry run plans: output folder -> (resources, input)."""
    import subprocess
    import sys
    from pathlib import Path

    snakemake = str(Path(sys.executable).with_name("snakemake"))
    done = subprocess.run(
        [snakemake, "-n", "--configfile", "config/smoke-full.yaml", "--config", *config],
        cwd=workdir,
        capture_output=True,
        text=True,
        # as on a machine with two GPUs: one without refuses devices >= 1
        env=dict(os.environ, CUDA_VISIBLE_DEVICES="0,1"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    jobs = {}
    for block in (done.stdout + done.stderr).split("rule bench:")[1:]:
        block = re.split(r"\n\s*rule \w+:", block)[0]  # up to the next job
        lines = {
            line.strip().split(":")[0]: line.strip() for line in block.splitlines() if ":" in line
        }
        jobs[lines["output"].split()[1].rsplit("/", 1)[0]] = lines
    return jobs


def test_gpu_runs_declare_gpus_and_take_the_cuda_environment(tmp_path):
    from testkit import copy_workflow, run_json

    workdir = copy_workflow(tmp_path)
    jobs = plan(workdir, "devices=[0,2]")
    on_gpus = jobs[run_json("digits", "mlp", "keras-torch", devices=2).rsplit("/", 1)[0]]
    assert "gpu=2" in on_gpus["resources"] and "cpu_exclusive=0" in on_gpus["resources"]
    assert ".venvs/keras-torch.cuda/ready.json" in on_gpus["input"]
    on_cpu = jobs[run_json("digits", "mlp", "keras-torch", devices=0).rsplit("/", 1)[0]]
    # all of the CPU: the whole cpu_exclusive amount of profiles/default
    assert "gpu=0" in on_cpu["resources"] and "cpu_exclusive=2" in on_cpu["resources"]
    assert ".venvs/keras-torch/ready.json" in on_cpu["input"]
    assert not any("/keras2-theano/2/" in job for job in jobs)  # n/a, never run
    # overlapping runs take a unit each: the machine's probe still measures alone
    overlapping = plan(workdir, "devices=[0]", "concurrent_cpu_runs=True")
    assert all("cpu_exclusive=1" in job["resources"] for job in overlapping.values())
    theano = overlapping[run_json("digits", "mlp", "keras2-theano").rsplit("/", 1)[0]]
    assert "theano_compile_cache=1, pytensor_compile_cache=0" in theano["resources"]
