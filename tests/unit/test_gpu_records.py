"""Records a GPU really wrote: 20 runs of the GPU campaign on an NVIDIA H200
(2026-11-26; 16 Xeon cores; torch 2.11+cu130, JAX 0.11.2, Keras 3.15.1,
cuDNN 9.19), kept in records/gpu with the GPU's own matrix-product
probes, so that collect, the summary, utilisation (MFU), cold starts and
energy are tested on what a GPU produced. Twelve come from the campaign's
second command, with the compile counts, the profiler's recurrent operators
and the energy rules of this code; six from its first, written before them
(the ResNet-50 on native torch that refused its shared weights, keras-jax's
CIFAR CNN whose epoch 2 compiled again and raised the steady median); two
from a later campaign on the same kind of machine: native-cudnn's LeNet and
Keras on JAX's LeNet on that machine's CPU, from the same trained weights."""

import json

import numpy as np
import pandas as pd
import pytest

from dlbench.analysis import cold_start, collect, utilisation
from dlbench.models import flops
from dlbench.record import record_schema
from testkit import REPO

GPU_RECORDS = REPO / "records" / "gpu"
MACHINE = "vm-nvidia-h200"
PEAKS = pd.read_csv(REPO / "workflow" / "resources" / "gpu_peaks.csv")


@pytest.fixture(scope="module")
def records():
    paths = sorted((GPU_RECORDS / "runs").rglob("run.json"))
    return collect.load_records(paths)


@pytest.fixture(scope="module")
def metrics(records):
    return collect.metrics(records)


def pick(records, model, backend, devices):
    found = [
        r for r in records if (r["model"], r["backend"], r["devices"]) == (model, backend, devices)
    ]
    assert len(found) == 1, (model, backend, devices)
    return found[0]


def test_every_record_conforms_and_ran(records):
    assert len(records) == 20
    for record in records:
        assert record_schema.problems(record) == []
        assert record["status"] == "ok" and record["machine"] == MACHINE


def test_the_gpu_runs_ran_on_the_gpu_each_with_its_id_and_memory(records):
    on_gpu = [r for r in records if r["devices"] == 1]
    assert len(on_gpu) == 13
    for record in on_gpu:
        assert record["parallel"]["accelerator"] == "gpu"
        assert record["parallel"]["gpu_ids"] == ["0"]  # the lock-file claim, one GPU here
        assert record["runtime"]["gpus"][0]["name"] == "NVIDIA H200"
        # the frameworks' CUDA allocators' peak; CuPy's pool for cuDNN's LeNet
        floor = 5 if record["backend"] == "native-cudnn" else 40
        assert record["peak_device_memory_mb"] > floor
    for record in records:
        if record["devices"] == 0:
            assert record["parallel"]["accelerator"] == "cpu"
            assert record["peak_device_memory_mb"] is None


def test_the_metrics_hold_accelerator_memory_cold_start_and_energy(metrics):
    gpu = metrics[metrics["devices"].astype(int) == 1]
    assert set(gpu["accelerator"]) == {"gpu"}
    assert (gpu["peak_device_memory_mb"] > 0).all()
    assert gpu["to_first_step_seconds"].notna().all()
    assert (gpu["framework_setup_seconds"] > 0).all()
    # the second command's records: NVML's steps are too coarse for their steady spans
    assert gpu["gpu_joules_steady_epoch"].notna().sum() >= 1  # the first command's, older rule
    busy = gpu["gpu_utilisation_percent"].dropna()
    assert len(busy) == 7 and ((busy >= 0) & (busy <= 100)).all()


def test_the_cold_start_table_splits_each_gpu_runs_start(metrics):
    found = cold_start.table(metrics)
    assert len(found) == len(metrics)
    parts = [column for column in cold_start.COLUMNS if column != "to_first_step_seconds"]
    assert (found[parts].fillna(0).sum(axis=1) > 0).all()


def test_energy_of_short_spans_is_a_reason_and_the_first_epoch_a_number(records):
    mlp = pick(records, "mlp", "native-torch", 1)["energy"]
    assert mlp["gpu_joules_per_epoch"][0] > 0  # the first epoch: compile, autotune, ~0.3 s
    assert "gpu_joules_steady_epoch" not in mlp
    assert "NVML's energy counter moves in steps" in mlp["gpu_steady_not_measured"]
    resnet = pick(records, "resnet50", "keras-torch", 1)["energy"]
    assert "gpu_joules_per_1000_samples" not in resnet
    cpu = pick(records, "mlp", "native-torch", 0)["energy"]
    assert cpu["gpu_not_measured"] == "no GPU in this run"


def test_an_epoch_that_compiled_again_is_left_out_of_the_steady_state(records):
    gpu = pick(records, "imdb_gru", "keras-jax", 1)
    assert gpu["compiles"]["per_epoch"][1] >= 1  # keras-jax compiles train_step again in epoch 2
    assert gpu["compiles"]["functions_after_first_epoch"] == ["jit(train_step)"]
    assert gpu["steady_epochs"] == [3]
    assert gpu["steady_epoch_seconds"] == gpu["epochs"][2]["seconds"]
    assert gpu["epochs"][1]["seconds"] > 10 * gpu["steady_epoch_seconds"]
    cpu = pick(records, "imdb_gru", "keras-jax", 0)
    assert cpu["compiles"]["per_epoch"][1:] == [0, 0]  # on the CPU it does not
    # the first command's record, before the compile count: epoch 2 made half its median
    before = pick(records, "cifar_cnn", "keras-jax", 1)
    assert "compiles" not in before
    seconds = [epoch["seconds"] for epoch in before["epochs"]]
    assert seconds[1] > 10 * seconds[2]


def test_the_recurrent_kernels_the_records_name(records):
    native = pick(records, "imdb_gru", "native-torch", 1)["settings"]["recurrent_kernels"]
    assert native.startswith("cuDNN")
    keras_torch = pick(records, "imdb_gru", "keras-torch", 1)["settings"]["recurrent_kernels"]
    assert keras_torch["gru"].startswith("torch's own GRU")  # Keras took torch._VF.gru
    on_cpu = pick(records, "imdb_gru", "keras-torch", 0)
    assert on_cpu["recurrent_ops"] == dict(on_cpu["recurrent_ops"], seen=[], cudnn=False)


def test_shared_weights_loaded_except_in_the_record_that_found_the_resnet_bug(records):
    refused = pick(records, "resnet50", "native-torch", 1)["initial_weights"]
    assert refused["loaded"] is False and "conv" in refused["reason"].lower()
    others = [r for r in records if (r["model"], r["backend"]) != ("resnet50", "native-torch")]
    assert all(r["initial_weights"]["loaded"] for r in others)


def test_mfu_of_the_gpu_cells_is_measured_against_the_gpus_own_probe(metrics):
    probes = [
        json.loads(path.read_text()) for path in sorted((GPU_RECORDS / "probes").rglob("*.json"))
    ]
    assert {p["precision"]: round(p["gflops"] / 1e3) for p in probes} == {
        "float32": 54,  # TF32 off: plain float32, datasheet 67
        "mixed_bfloat16": 796,  # datasheet 989.5 dense
    }
    summary = collect.summary(metrics)
    digits = {"input_shape": [8, 8, 1], "classes": 10}
    per_sample = {("digits", "mlp"): flops.per_sample("mlp", digits)}
    found = utilisation.table(summary, metrics, per_sample, PEAKS, probes).set_index(
        ["backend", "devices"]
    )
    gpu = found.loc[("native-torch", 1)]
    assert gpu["peak_gflops"] == pytest.approx(probes[0]["gflops"])
    assert "NVIDIA H200 float32 matmul probe at 16384 x 16384" in gpu["peak_source"]
    assert gpu["datasheet_gflops"] == 67000
    assert 0 < gpu["mfu"] < 0.01  # a 670k-parameter MLP on batches of 128 leaves an H200 idle


def test_cpu_against_gpu_on_the_same_machine(metrics):
    summary = collect.summary(metrics).set_index(["model", "backend", "devices"])
    for backend in ("native-torch", "keras-torch"):
        cpu = summary.loc[("mlp", backend, 0), "steady_epoch_seconds"]
        gpu = summary.loc[("mlp", backend, 1), "steady_epoch_seconds"]
        assert cpu > gpu > 0
    resnet_cpu = summary.loc[("resnet50", "keras-torch", 0), "seconds_per_1000_samples"]
    resnet_gpu = summary.loc[("resnet50", "keras-torch", 1), "seconds_per_1000_samples"]
    assert resnet_cpu > 3 * resnet_gpu
    assert summary.loc[("resnet50", "keras-torch", 1), "peak_device_memory_mb"] > 1000
    assert pd.isna(summary.loc[("resnet50", "keras-torch", 0), "peak_device_memory_mb"])


def test_cudnn_called_directly_computes_what_keras_does_from_the_same_weights(records):
    cudnn = pick(records, "lenet", "native-cudnn", 1)
    keras_on_cpu = pick(records, "lenet", "keras-jax", 0)
    assert cudnn["initial_weights"]["sha256"] == keras_on_cpu["initial_weights"]["sha256"]
    ours = np.array(cudnn["predictions"]["outputs"])
    theirs = np.array(keras_on_cpu["predictions"]["outputs"])
    assert ours.shape == (64, 10)
    assert np.abs(ours - theirs).max() < 1e-6  # measured 4.2e-7: the same float32 sums
    assert cudnn["predictions"]["classes_sha256"] == keras_on_cpu["predictions"]["classes_sha256"]
    settings = cudnn["settings"]
    assert settings["convolution_algorithms"] == [["IMPLICIT_GEMM"], ["IMPLICIT_GEMM"]]
    assert settings["libraries"]["libcudnn"].endswith("libcudnn.so.9")
    assert cudnn["environment_check"]["installed"]["nvidia-cudnn-cu13"] == "9.19.0.56"


def test_the_cudnn_latency_comparison_reads_from_the_records(metrics):
    """Source 004's question (cuDNN, the framework, Keras): the metrics carry
    each LeNet's latency and cold start side by side."""
    lenet = metrics[(metrics["model"] == "lenet") & (metrics["devices"].astype(int) == 1)]
    latency = lenet.set_index("backend")["latency_p50_ms"]
    assert set(latency.index) == {"native-cudnn", "native-torch", "keras-torch"}
    assert latency.notna().all() and (latency > 0).all()
    setup = lenet.set_index("backend")["framework_setup_seconds"]
    assert setup["native-cudnn"] < setup["native-torch"] < setup["keras-torch"]
