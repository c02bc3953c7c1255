"""The GPU kit's choices (what travels, what the machine keeps) and the GPU
campaign's own mechanics (stages, the budget, the pack, the kit's fit),
without pip's network or a GPU: tests/e2e/test_gpu_rehearsal.py runs both."""

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time

import pytest
import yaml

from dlbench.campaign import (
    config_files,
    gpu_campaign,
    gpus,
    interpreter,
    packing,
    stage_order,
    stage_runner,
)
from dlbench.environments import gpu_kit
from testkit import REPO, jobs_planned_on_one_gpu

IMAGE = gpu_kit.image_packages(REPO / gpu_kit.IMAGE_LIST)
CONFIG = str(REPO / config_files.CONFIG)


def resolved(name, version, wheel_tags="py3-none-any"):
    """One entry of pip's installation report (pip install --report)."""
    url = "https://files.example/{}-{}-{}.whl".format(name.replace("-", "_"), version, wheel_tags)
    return {"metadata": {"name": name, "version": version}, "download_info": {"url": url}}


def test_the_machine_list_gives_names_and_the_versions_seen():
    assert IMAGE["torch"] == "2.11.0"
    assert IMAGE["jax-cuda13-plugin"] == "0.11.2"
    assert "packaging" in IMAGE and IMAGE["packaging"] is None
    assert "snakemake" not in IMAGE and "keras" not in IMAGE


def test_the_kit_resolves_what_the_machine_lacks_and_never_a_framework():
    wanted = gpu_kit.requirements(REPO)
    assert "keras==3.15.1" in wanted and "snakemake==9.27.1" in wanted
    assert not any(line.startswith("snakemake-executor-plugin-slurm") for line in wanted)
    kit, machine = gpu_kit.held_by_image(wanted, IMAGE)
    assert {"snakemake==9.27.1", "keras==3.15.1", "pooch==1.9.0"} <= set(kit)
    assert {"jax[cuda12]==0.10.2", "torch==2.13.0", "pandas==3.1.1"} <= set(machine)


def test_a_dependency_travels_unless_the_machine_holds_it_known_or_compiled():
    report = {
        "install": [
            resolved("snakemake", "9.27.1"),
            resolved("packaging", "25.0"),  # held, version unknown, pure: travels
            resolved("numpy", "2.5.2", "cp312-cp312-manylinux_2_28_x86_64"),  # held, known
            resolved("ml_dtypes", "0.6.0", "cp312-cp312-manylinux_2_28_x86_64"),  # held, compiled
        ]
    }
    carried, machine = gpu_kit.split_resolution(report, IMAGE)
    assert [entry["name"] for entry in carried] == ["packaging", "snakemake"]
    assert [entry["name"] for entry in machine] == ["ml-dtypes", "numpy"]
    assert carried[0]["file"] == "packaging-25.0-py3-none-any.whl"


# A transfer of limited size to a GPU machine, as --size-limit-mib gives it.
SIZE_LIMIT_MIB = 64


def test_the_summary_gives_the_size_against_the_size_limit():
    carried = [{"name": "keras", "version": "3.15.1", "file": "keras.whl", "bytes": 3 * 2**20}]
    manifest = {
        "python_version": "3.12",
        "carried": carried,
        "from_image": [],
        "kit_bytes": 3 * 2**20,
        "tree_bytes": 2**20,
        "size_limit_bytes": SIZE_LIMIT_MIB * 2**20,
    }
    text = gpu_kit.summary(manifest)
    assert "1 wheels, 3.0 MiB" in text and "4.0 of 64 MiB" in text and "keras.whl" in text
    assert not gpu_kit.too_large(manifest)
    assert gpu_kit.too_large(dict(manifest, size_limit_bytes=3 * 2**20))
    assert not gpu_kit.too_large(dict(manifest, size_limit_bytes=0))  # no limit
    assert gpu_kit.travelling_bytes(REPO) < SIZE_LIMIT_MIB * 2**20 / 4


def test_the_campaign_runs_the_gpu_cells_first_the_cheapest_first():
    stages = dict(stage_order.stages([CONFIG]))
    assert list(stages) == [
        "gpu probes",
        "gpu runs, float32",
        "cpu runs, float32",
        "gpu runs, reduced precision",
        "gpu runs, other compile mode",
        "cpu runs, the rest",
        "tables and plots",
        "report",
    ]
    machine = stages["gpu runs, float32"][0].split("/")[2]
    assert stages["gpu probes"] == [
        "results/probes/{}/gpu/precision={}.json".format(machine, precision)
        for precision in ("float32", "mixed_bfloat16")
    ]
    assert stages["tables and plots"] == ["all", "pack"]
    first = stages["gpu runs, float32"]
    reduced = stages["gpu runs, reduced precision"]
    other = stages["gpu runs, other compile mode"]
    gpu = first + reduced + other
    cpu = stages["cpu runs, float32"] + stages["cpu runs, the rest"]
    assert gpu and all("/devices=1/" in path for path in gpu)
    assert cpu and all("/devices=0/" in path for path in cpu)
    # every GPU cell once, its CPU cell beside, but cuDNN's (GPUs only)
    assert len(gpu) == len(set(gpu)) == len(cpu) + 1
    assert [p for p in gpu if "native-cudnn" in p] == [
        p for p in first if "/digits/lenet/native-cudnn/" in p
    ]
    models = {path.split("/")[4] for path in gpu}
    assert models == {"mlp", "cnn", "lenet", "deep_mnist", "cifar_cnn", "imdb_gru", "resnet50"}
    assert all("precision=float32" in path for path in first)
    assert all("precision=mixed_bfloat16" in path for path in reduced)
    # torch eager first, its torch.compile cells last; JAX only compiles
    assert all("compile=compiled" in p and "torch" in p for p in other)
    assert any("keras-jax" in p and "compile=compiled" in p for p in first)
    assert len(first) - 1 == len(reduced) == 7 * 4
    # the CPU's float32 cells in the same modes, for CPU against GPU
    assert stages["cpu runs, float32"] == [
        p.replace("/devices=1/", "/devices=0/") for p in first if "native-cudnn" not in p
    ]


def overlays_of_what_no_gpu_has_run():
    """The two exclude overlays that docs/results-h200.md gives for what
    no GPU has run yet: the GPU's cells, then the CPU's."""
    page = (REPO / "docs" / "results-h200.md").read_text()
    section = page[page.index("## Not yet run on a GPU") :]
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", section, re.S)]


def test_the_overlays_for_what_no_gpu_has_run_plan_exactly_those_cells(tmp_path):
    """docs/results-h200.md: torch.compile in bfloat16 on the GPU, and Keras
    on torch's eager GRU again (its recurrent path is now recorded), after
    the probes and before the compiles; then the 56 CPU cells. Each an
    overlay on config/gpu.yaml: the same cells, nothing else changed."""
    gpu_overlay, cpu_overlay = overlays_of_what_no_gpu_has_run()
    every = {run for run, _ in config_files.planned_runs([CONFIG])}
    models = {"mlp", "cnn", "lenet", "deep_mnist", "cifar_cnn", "imdb_gru", "resnet50"}
    configs = []
    for name, overlay in (("gpu", gpu_overlay), ("cpu", cpu_overlay)):
        assert set(overlay) == {"exclude"}  # an overlay: nothing else changes
        path = tmp_path / (name + ".yaml")
        path.write_text(yaml.safe_dump(overlay))
        configs.append([CONFIG, str(path)])
    planned = config_files.planned_runs(configs[0])
    cells = [run for run, _ in planned]
    compiled = {
        (run.backend, run.model)
        for run in cells
        if run.precision == "mixed_bfloat16" and run.compile == "compiled"
    }
    assert compiled == {(backend, m) for backend in ("keras-torch", "native-torch") for m in models}
    others = [run for run in cells if run.compile == "eager"]
    assert [(run.backend, run.model, run.precision, run.compile) for run in others] == [
        ("keras-torch", "imdb_gru", "float32", "eager")
    ]
    assert len(cells) == 15 and all(int(run.devices) == 1 for run in cells)
    assert set(cells) <= every
    stages = dict(stage_order.stages(configs[0]))
    gru = [path for run, path in planned if run.compile == "eager"]
    assert stages["gpu runs, float32"] == gru  # after the probes, before the compiles
    assert len(stages["gpu runs, reduced precision"]) == 14
    cpu = config_files.planned_runs(configs[1])
    assert len(cpu) == 56 and all(int(run.devices) == 0 for run, _ in cpu)
    assert {run for run, _ in cpu} <= every
    # the CPU cells the H200s ran (config/gpu.yaml's first CPU stage) are left out
    ran = dict(stage_order.stages([CONFIG]))["cpu runs, float32"]
    assert not {path for _, path in cpu} & set(ran)


def test_a_campaign_on_a_fresh_machine_leaves_out_what_earlier_packs_recorded(tmp_path):
    everything = dict(stage_order.stages([CONFIG]))
    first = everything["gpu runs, float32"]
    pack = tmp_path / "results.tar.gz"
    with tarfile.open(str(pack), "w:gz") as tar:
        for path, status in ((first[0], "ok"), (first[1], "failed")):
            data = json.dumps({"status": status}).encode()
            member = tarfile.TarInfo(path)
            member.size = len(data)
            tar.addfile(member, io.BytesIO(data))
        probe = everything["gpu probes"][0]
        member = tarfile.TarInfo(probe)
        tar.addfile(member, io.BytesIO(b""))
    done = stage_order.recorded_elsewhere([str(pack)])
    assert done == {first[0], probe}  # a failed record runs again
    resumed = dict(stage_order.stages([CONFIG], done))
    assert resumed["gpu runs, float32"] == first[1:]
    assert resumed["gpu probes"] == everything["gpu probes"][1:]  # the probe measured there
    # the tables and the report need every record: made where the packs are imported
    assert "tables and plots" not in resumed and "report" not in resumed


def fake_nvidia_smi(folder, script):
    """An ``nvidia-smi`` of ``script`` (shell), first on the PATH."""
    folder.mkdir()
    command = folder / "nvidia-smi"
    command.write_text("#!/bin/sh\n" + script)
    command.chmod(0o755)
    return "{}{}{}".format(folder, os.pathsep, os.environ["PATH"])


def test_a_failing_nvidia_smi_refuses_a_gpu_campaign_before_snakemake_starts(tmp_path, monkeypatch):
    """nvidia-smi that fails (no driver answering) is not a machine without
    GPUs: the campaign stops with its error and exit status before it
    starts any Snakemake; a campaign of CPU runs alone goes on, and says
    why no GPU is listed."""
    said = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
    failing = 'echo "{}" >&2\nexit 9\n'.format(said)
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path / "bin", failing))
    failure = "`nvidia-smi -L` exited with status 9: " + said
    with pytest.raises(gpus.GPUsNotListed) as listed:
        gpus.visible_gpus()
    assert str(listed.value) == failure

    cpu_only = tmp_path / "cpu-only.yaml"
    cpu_only.write_text(yaml.safe_dump({"devices": [0]}))
    assert gpus.campaign_gpus([CONFIG, str(cpu_only)]) == ([], failure)

    # the campaign itself, in a folder of its own: its Snakemake is a stand-in
    # that notes every call
    workdir = tmp_path / "work"
    workdir.mkdir()
    for name in ("config", "workflow"):
        (workdir / name).symlink_to(REPO / name)
    kit = tmp_path / "kit"
    kit.mkdir()
    carried = {"carried": [], "python_version": "3", "kit_bytes": 0, "image_list": "none"}
    (kit / "kit.json").write_text(json.dumps(carried))
    (tmp_path / "env").mkdir()
    calls = tmp_path / "calls"
    python = tmp_path / "python"
    python.write_text('#!/bin/sh\necho "$@" >> {}\nexit 1\n'.format(calls))
    python.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.chdir(workdir)
    command = ["--inside", "--out", str(tmp_path / "out"), "--kit", str(kit)]
    command += ["--env", str(tmp_path / "env"), "--config", CONFIG]
    with pytest.raises(SystemExit) as refused:
        gpu_campaign.main(command)
    message = str(refused.value.code)
    assert message.startswith("this machine's GPUs are not known: " + failure + ". ")
    assert "GPU runs and started none" in message
    assert not calls.exists() and not (workdir / "logs").exists()  # no Snakemake, not even --unlock
    assert not (tmp_path / "out").exists()

    listing = "echo 'GPU 0: NVIDIA H100 (UUID: GPU-0)'\necho 'GPU 1: NVIDIA H100 (UUID: GPU-1)'\n"
    monkeypatch.setenv("PATH", fake_nvidia_smi(tmp_path / "bin2", listing))
    assert gpus.campaign_gpus([CONFIG]) == (
        ["GPU 0: NVIDIA H100 (UUID: GPU-0)", "GPU 1: NVIDIA H100 (UUID: GPU-1)"],
        None,
    )


def test_the_gpu_config_plans_every_cell_and_the_gpus_own_probe():
    counts = jobs_planned_on_one_gpu(CONFIG)
    # 7 workloads x 4 backends x 2 devices x precision x compile, and cuDNN's LeNet
    assert counts["bench"] == 169
    assert counts["gpu_probe"] == 2 and counts["cpu_probe"] == 2  # float32, bfloat16


def test_the_budget_interrupts_snakemake_and_kills_what_ignores_it(tmp_path, monkeypatch):
    """The stage is interrupted even where the campaign itself was started
    ignoring SIGINT (a background job of a shell without job control), and
    killed where SIGINT never reaches it. The stand-ins need no start-up
    (``sleep``) and their dispositions are inherited, so nothing here races
    the deadline on a slow machine."""
    sleep = shutil.which("sleep")
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under `nohup ... &`
    try:
        with open(tmp_path / "log", "w") as log:
            began = time.time()
            status, interrupted = stage_runner.run_stage([sleep, "60"], time.time() + 1, log)
            assert interrupted and status == -signal.SIGINT and time.time() - began < 30
            monkeypatch.setattr(stage_runner, "INTERRUPT_GRACE_SECONDS", 1)
            # blocked, SIGINT stays pending in the child: a stage that never
            # takes it, from its first instruction
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                status, interrupted = stage_runner.run_stage([sleep, "60"], time.time() + 1, log)
            finally:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
            assert interrupted and status == -signal.SIGKILL
            status, interrupted = stage_runner.run_stage([sleep, "0"], time.time() + 60, log)
            assert (status, interrupted) == (0, False)
    finally:
        signal.signal(signal.SIGINT, ignored)


def test_the_pack_keeps_records_and_leaves_out_data_then_logs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = tmp_path / "results/runs/m/digits/mlp/keras-jax/devices=1"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"status": "ok"}))
    (run / "epochs.csv").write_text("epoch,seconds\n1,0.1\n")
    (tmp_path / "results/data").mkdir()
    (tmp_path / "results/data/digits.npz").write_bytes(b"data")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs/gpu_campaign.log").write_bytes(os.urandom(200_000))
    archive, with_logs = packing.pack(tmp_path / "out", {"complete": True})
    with tarfile.open(str(archive)) as tar:
        names = set(tar.getnames())
    assert with_logs and "logs/gpu_campaign.log" in names
    assert "results/runs/m/digits/mlp/keras-jax/devices=1/run.json" in names
    assert not any(name.endswith(".npz") for name in names)
    assert json.loads((tmp_path / "out/campaign.json").read_text()) == {"complete": True}
    archive, with_logs = packing.pack(tmp_path / "out", {"complete": False}, 100_000)
    with tarfile.open(str(archive)) as tar:
        assert "logs/gpu_campaign.log" not in tar.getnames()
    assert not with_logs


def test_a_kit_that_does_not_fit_the_machine_is_named_before_anything_runs(tmp_path, monkeypatch):
    info = tmp_path / "needy-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: needy\nVersion: 1.0\n"
        "Requires-Dist: packaging<1\nRequires-Dist: surely-absent-distribution\n"
        'Requires-Dist: pytest; extra == "test"\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    problems = interpreter.unmet_requirements(["needy"])
    assert len(problems) == 2
    assert problems[0].startswith("needy needs packaging<1: this machine has ")
    assert problems[1] == "needy needs surely-absent-distribution: absent"
    assert interpreter.unmet_requirements(["jsonschema", "snakemake"]) == []


def test_the_campaign_says_how_to_get_a_kit_when_none_was_copied(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "dlbench.campaign.gpu_campaign", "--out", str(tmp_path / "out")]
        + ["--kit", str(tmp_path / "no-kit"), "--env", str(tmp_path / "env")],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env=dict(os.environ, PYTHONPATH=str(REPO / "src")),
    )
    assert done.returncode == 1
    assert "no GPU kit in {}: run `make gpu-kit`".format(tmp_path / "no-kit") in done.stderr


def test_the_campaign_keeps_the_bytecode_it_compiles_whatever_the_caller_says():
    """The kit is installed without bytecode, compiled as the campaign
    imports it: a caller's PYTHONDONTWRITEBYTECODE would have every job
    compile the same modules again."""
    caller = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": "/elsewhere", "HOME": "/root"}
    inside = interpreter.inside_environment("/work/src", caller)
    assert "PYTHONDONTWRITEBYTECODE" not in inside
    assert inside["PYTHONPATH"] == os.pathsep.join(["/work/src", "/elsewhere"])
    assert inside["HOME"] == "/root" and caller["PYTHONDONTWRITEBYTECODE"] == "1"
