"""The GPU campaign rehearsed on the CPU: the kit of ``make gpu-kit`` (real
wheels for Python 3.12 from PyPI), installed with ``--no-index`` beside a
Python 3.12 interpreter that holds what the GPU machine's holds, proves the
kit complete; then the campaign's own command, devices 0 and float32 only,
cut off by its budget and resumed, packs records, tables and the report.

Two departures from the GPU machine. PyPI has no CPU build of torch for
Python 3.12 (its build there is CUDA's, gigabytes; this machine's CPU wheel is
for 3.11), so the rehearsal's interpreter holds JAX but not torch. The torch
backends stay in the config and show the missing framework as their reason;
the shared initial weights and LeNet's trained weights, drawn on keras-torch,
are each backend's own here. And the GPU's own libraries (cuDNN, cuBLAS and
CuPy, 1.3 GB unpacked) are left out: nothing on a CPU loads them."""

import json
import os
import subprocess
import sys
import tarfile

import pandas as pd
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from dlbench.environments import gpu_kit, interpreters
from testkit import REPO, RUN_TIMEOUT_S, copy_workflow, write_config

# A transfer of limited size to the GPU machine: the kit and the tree must fit it.
SIZE_LIMIT_MIB = 64

pytestmark = pytest.mark.early  # mostly pip's downloads: beside the CPU-bound modules
INSTALL_TIMEOUT_S = 1800


def left_out_here(name):
    """The GPU machine's distributions the rehearsal's interpreter leaves
    out (the module's docstring says why); NVML's bindings stay."""
    gpu_library = name.startswith(("nvidia-", "cupy-cuda")) and name != "nvidia-ml-py"
    return name == "torch" or gpu_library


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpu") / "kit"
    done = subprocess.run(
        [sys.executable, "-m", "dlbench.environments.gpu_kit", "--out", str(folder)]
        + ["--size-limit-mib", str(SIZE_LIMIT_MIB)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    print(done.stdout)
    return folder


def machine_requirements(manifest):
    """What the GPU machine's interpreter holds that the campaign uses: the
    versions the kit was resolved against, then the project's pins of the
    rest (CPU builds)."""
    wanted = {
        entry["name"]: "{}=={}".format(entry["name"], entry["version"])
        for entry in manifest["from_image"]
    }
    for line in manifest["image_requirements"]:
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        if not left_out_here(name):
            wanted.setdefault(name, "{}{}".format(name, requirement.specifier))
    return sorted(wanted.values())


@pytest.fixture(scope="module")
def machine_python(kit, tmp_path_factory):
    """A Python 3.12 venv standing for the GPU machine's python3."""
    manifest = json.loads((kit / gpu_kit.MANIFEST).read_text())
    venv = tmp_path_factory.mktemp("gpu") / "machine"
    python = interpreters.find_python(manifest["python_version"])
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    # no bytecode compiled at install: two thirds of the install's CPU, for
    # files the rehearsal never imports (those it does compile on import)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-compile"]
        + machine_requirements(manifest),
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return str(venv / "bin" / "python")


def rehearsal_config(workdir):
    config = yaml.safe_load((REPO / "config" / "gpu.yaml").read_text())
    (mlp,) = [entry for entry in config["workloads"] if entry["model"] == "mlp"]
    # float32 only: bfloat16 on JAX's CPU is trained and inferred in the
    # tests' workflow and the precision module; here three runs of it (53 s of
    # CPU on a Zen 3) rehearsed nothing the campaign's stages do not do in float32
    config.update(
        threads=1,
        precision=["float32"],
        initial_weights="own",
        workloads=[dict(mlp, epochs=2)],
        backends={
            key: config["backends"][key] for key in ("keras-jax", "native-jax", "keras-torch")
        },
        equivalence_check=dict(config["equivalence_check"], workloads=["digits/mlp"]),
    )
    return write_config(workdir / "config" / "rehearsal.yaml", config)


@pytest.fixture(scope="module")
def rehearsal(kit, machine_python, tmp_path_factory):
    workdir = copy_workflow(tmp_path_factory.mktemp("gpu") / "workflow")
    config = rehearsal_config(workdir)

    # the resumed campaign follows a campaign file: native JAX's runs first, then the rest
    campaign_file = workdir / "config" / "campaigns" / "rehearsal.yaml"
    campaign_file.parent.mkdir(exist_ok=True)
    stage = {"name": "native JAX first", "select": [{"backend": "native-jax"}]}
    campaign_file.write_text(yaml.safe_dump({"config": [str(config)], "stages": [stage]}))

    def campaign(out, *options, configs=("--config", str(config))):
        command = [machine_python, "-m", "dlbench.campaign.gpu_campaign", "--kit", str(kit)]
        command += ["--python", machine_python, *configs, "--devices", "0"]
        command += ["--jobs", "1", *(["--out", str(workdir / out)] if out else []), *options]
        return subprocess.run(
            command,
            cwd=str(workdir),
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH="src"),
            timeout=3 * RUN_TIMEOUT_S,
        )

    prepared = campaign(None, "--prepare-only")
    # cut off inside its first stage (three runs: 28 s on a 2-core Zen 4)
    cut_off = campaign(
        "first", "--budget-seconds", "20", "--min-stage-seconds", "5", "--pack-reserve-seconds", "0"
    )
    resumed = campaign(
        "second", "--budget-seconds", "1500", configs=("--campaign", str(campaign_file))
    )
    return workdir, prepared, cut_off, resumed


def summary_machine(workdir):
    (machine,) = set(pd.read_csv(workdir / "results" / "summary.csv")["machine"])
    return machine


def packed(out):
    with tarfile.open(str(out / "results.tar.gz")) as tar:
        return set(tar.getnames())


def test_the_kit_fits_the_size_limit_and_installs_without_an_index(kit, rehearsal):
    manifest = json.loads((kit / gpu_kit.MANIFEST).read_text())
    assert manifest["size_limit_bytes"] == SIZE_LIMIT_MIB * 2**20
    assert manifest["kit_bytes"] + manifest["tree_bytes"] <= manifest["size_limit_bytes"]
    assert {"snakemake", "keras", "pooch", "connection-pool"} <= {
        entry["name"] for entry in manifest["carried"]
    }
    assert "connection_pool" in manifest["built_here"][0]  # an sdist on PyPI
    _, prepared, _, _ = rehearsal
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    assert "distributions have what they need" in prepared.stdout


def test_the_budget_cuts_the_campaign_off_and_leaves_no_half_record(rehearsal):
    workdir, _, cut_off, _ = rehearsal
    assert cut_off.returncode == 3, cut_off.stdout + cut_off.stderr
    assert "not complete: the same command resumes it" in cut_off.stdout
    campaign = json.loads((workdir / "first" / "campaign.json").read_text())
    assert campaign["complete"] is False
    assert any(stage.get("interrupted") or not stage["started"] for stage in campaign["stages"])
    assert packed(workdir / "first")


def test_the_same_command_resumes_and_packs_records_tables_and_report(rehearsal):
    workdir, _, _, resumed = rehearsal
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    campaign = json.loads((workdir / "second" / "campaign.json").read_text())
    assert campaign["complete"] and campaign["gpus"] == []
    # the campaign file's stage, then what it did not select, then the tables and the report
    stages = [stage["name"] for stage in campaign["stages"] if stage["started"]]
    assert stages[0] == "native JAX first" and stages[-2:] == ["tables and plots", "report"]
    names = packed(workdir / "second")
    machine_pack = workdir / "second" / "{}.tar.gz".format(summary_machine(workdir))
    with tarfile.open(str(machine_pack)) as tar:
        # keras-jax and native-jax compiled (JAX has no eager mode), keras-torch's two modes
        assert sum(name.endswith("run.json") for name in tar.getnames()) == 4
    assert {"results/summary.csv", "results/report.html", "logs/gpu_campaign.log"} <= names
    assert not any(name.endswith(".npz") for name in names)
    summary = pd.read_csv(workdir / "results" / "summary.csv")
    ran = summary[summary["status"] == "ok"]
    assert set(ran["backend"]) == {"keras-jax", "native-jax"}
    assert set(ran["precision"]) == {"float32"}
    assert (ran["test_accuracy"] > 0.5).all()
    torch = summary[summary["backend"] == "keras-torch"]
    assert set(torch["status"]) == {"unavailable"}
    for path in (workdir / "results" / "runs").rglob("run.json"):
        record = json.loads(path.read_text())
        assert record["environment_check"]["mode"] == "existing"
        if record["status"] == "ok":
            assert record["runtime"]["python_executable"].endswith(".gpu-env/bin/python")
            assert record["cold_start"]["first_step_seconds"] > 0
