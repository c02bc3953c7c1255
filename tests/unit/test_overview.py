"""Published figures beside ours, the hardware table, the heat-map and the
report's front page."""

import base64
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import figures
from dlbench.analysis import collect, front_page, hardware, plots_heat_maps, published, stats
from dlbench.plan import matrix
from testkit import REPO, fixture_record

PUBLISHED = REPO / "workflow" / "resources" / "published_results.csv"
PUBLISHED_HARDWARE = REPO / "workflow" / "resources" / "published_hardware.csv"
GPU_PEAKS = REPO / "workflow" / "resources" / "gpu_peaks.csv"


def test_the_published_figures_are_the_documented_sources():
    """docs/results.md: DeepLearningFrameworks on K80 and P100, the 2017
    Keras backend comparison on an Azure K80; one figure in seconds a
    source, workload, framework, hardware and metric."""
    table = published.read(PUBLISHED)
    assert list(table.columns) == [
        "source",
        "workload",
        "framework",
        "hardware",
        "metric",
        "value",
        "unit",
        "notes",
    ]
    assert table.groupby("source")["hardware"].agg(set).to_dict() == {
        "DeepLearningFrameworks v1.0 (source 002)": {"K80/CUDA 8/cuDNN 6", "P100/CUDA 8/cuDNN 6"},
        "Keras backend comparison 2017 (source 003)": {"Azure NC6 K80"},
    }
    assert set(table["workload"]) <= set(published.WORKLOADS)
    assert set(table["metric"]) <= set(published.OUR_FIGURE)
    assert (table["unit"] == "s").all() and (table["value"] > 0).all()
    assert not table.duplicated(["source", "workload", "framework", "hardware", "metric"]).any()
    # every framework but the two without a counterpart is one of our backends
    assert set(table["framework"]) - set(published.BACKENDS) == {"Caffe2", "Julia-Knet"}
    # a total over the first epochs: the notes name them as PUBLISHED_EPOCHS has them
    cifar = table[table["workload"] == "cifar10_cnn"]
    assert set(cifar["notes"]) == {"{} epochs".format(published.PUBLISHED_EPOCHS["cifar10_cnn"])}


def test_the_project_copy_of_the_published_figures_is_the_shared_reference():
    shared = REPO.parent / "shared" / "reference" / "published_results.csv"
    if not shared.exists():
        pytest.skip("no shared reference to compare the project's copy with: {}".format(shared))
    assert PUBLISHED.read_text() == shared.read_text()  # the copy has not drifted


def summary_cell(dataset, model, backend, value, figure="steady_epoch_seconds", devices=0):
    return {
        "dataset": dataset,
        "model": model,
        "backend": backend,
        "machine": "m1",
        "devices": devices,
        "threads": "all",
        "precision": "float32",
        "compile": "auto",
        "versions": "pinned",
        "accelerator": "cpu",
        "status": "ok",
        figure: value,
    }


def ours():
    summary = pd.DataFrame(
        [
            summary_cell("imdb_tiny", "imdb_gru", "native-tensorflow", 2.0),
            summary_cell("imdb_tiny", "imdb_gru", "native-torch", 1.0),
            summary_cell("imdb_tiny", "imdb_gru", "keras-tensorflow", 4.0),
            summary_cell("imdb_tiny", "imdb_gru", "keras-jax", 0.5),  # no counterpart
        ]
    ).assign(seconds_per_1000_samples=float("nan"))
    metrics = summary[
        ["machine", "dataset", "model", "devices", "threads", "precision", "compile", "versions"]
    ].assign(cpu_model="Test CPU", gpu_model=None)
    return summary, metrics


def test_rankings_compare_over_the_frameworks_both_sides_measured():
    summary, metrics = ours()
    table = published.side_by_side(published.read(PUBLISHED), summary, metrics)
    k80 = table[
        (table["workload"] == "imdb_gru") & table["published_hardware"].str.startswith("K80")
    ].set_index("framework")
    # As published: over every framework of the source (MXNet's 29 s is the fastest).
    assert k80.loc["Tensorflow", "published_relative"] == pytest.approx(30 / 29)
    # Over the three both sides have: Tensorflow 30, PyTorch 31, Keras(TF) 35 against
    # ours 2.0, 1.0, 4.0 s; keras-jax has no published counterpart and is left out.
    assert k80.loc["PyTorch", "our_relative_common"] == 1.0
    assert k80.loc["Keras(TF)", "our_relative_common"] == 4.0
    assert k80.loc["Keras(TF)", "published_relative_common"] == pytest.approx(35 / 30)
    assert k80.loc["PyTorch", "our_rank"] == 1 and k80.loc["PyTorch", "published_rank"] == 2
    assert k80.loc["Tensorflow", "our_hardware"] == "CPU (Test CPU)"
    assert pd.isna(k80.loc["CNTK", "our_value"])  # published, not measured by us
    assert "keras-jax" not in set(table["backend"])


def test_the_published_plot_shows_both_rankings_over_the_common_frameworks(tmp_path):
    summary, metrics = ours()
    table = published.side_by_side(published.read(PUBLISHED), summary, metrics)
    figure = published.figure_of(table)
    (axis,) = figure.axes  # imdb_gru, the one workload we measured
    assert axis.get_title() == "imdb_gru (ours: imdb_tiny)"
    assert figures.tick_labels(axis, "y") == [
        "Keras(TF) (keras-tensorflow)",
        "PyTorch (native-torch)",
        "Tensorflow (native-tensorflow)",
    ]
    frameworks = [label.split(" (")[0] for label in figures.tick_labels(axis, "y")]

    def by_framework(series):
        x, y = series
        return {frameworks[round(position)]: value for value, position in zip(x, y)}

    shown = figures.lines(axis)
    # each side over the fastest of Tensorflow, PyTorch and Keras(TF): ours
    # 2.0, 1.0 and 4.0 s; published (the CSV's imdb_gru rows) 30, 31, 35 s on
    # the K80 and 22, 16, 26 s on the P100
    assert by_framework(shown["ours: CPU (Test CPU)"]) == {
        "Tensorflow": 2.0,
        "PyTorch": 1.0,
        "Keras(TF)": 4.0,
    }
    assert by_framework(shown["published: K80/CUDA 8/cuDNN 6"]) == pytest.approx(
        {"Tensorflow": 1.0, "PyTorch": 31 / 30, "Keras(TF)": 35 / 30}
    )
    assert by_framework(shown["published: P100/CUDA 8/cuDNN 6"]) == pytest.approx(
        {"Tensorflow": 22 / 16, "PyTorch": 1.0, "Keras(TF)": 26 / 16}
    )
    assert len(shown) == 3
    published.plot(table, tmp_path / "published.png")
    assert figures.png_shows(tmp_path / "published.png", figure)
    (axis,) = published.figure_of(table.iloc[0:0]).axes
    assert figures.texts(axis) == ["No published workload was measured in this run."]


def test_every_published_hardware_has_its_datasheet_peak():
    hardware = pd.read_csv(PUBLISHED_HARDWARE)
    assert set(pd.read_csv(PUBLISHED)["hardware"]) <= set(hardware["hardware"])
    peaks = published.published_peaks(hardware, pd.read_csv(GPU_PEAKS))
    assert peaks == {
        "K80/CUDA 8/cuDNN 6": 4.37,
        "Azure NC6 K80": 4.37,
        "P100/CUDA 8/cuDNN 6": 9.3,
    }


def test_published_epochs_are_those_the_figures_were_timed_over():
    table = pd.read_csv(PUBLISHED)
    totals = table[table["metric"] == "train_time"]
    assert set(totals["workload"]) == set(published.PUBLISHED_EPOCHS)
    said = totals["notes"].str.extract(r"(\d+) epochs", expand=False).dropna()
    assert len(said)  # the CIFAR-10 CNN's rows say theirs
    assert (
        said.astype(int) == totals.loc[said.index, "workload"].map(published.PUBLISHED_EPOCHS)
    ).all()


def gpu_cell(dataset, model, backend, precision="float32", **figures):
    return {
        **summary_cell(dataset, model, backend, float("nan"), devices=1),
        "accelerator": "gpu",
        "precision": precision,
        **figures,
    }


PROBED = (
    "1 x NVIDIA H200 float32 matmul probe at 16384 x 16384 (torch 2.5.1 (CUDA 12.4, TF32 matmul "
    "False)); datasheet: 1 x H200 FP32 67 TFLOP/s (NVIDIA H200 datasheet)"
)


def utilisation_of(summary, peak_gflops, peak_source):
    return summary[list(matrix.CELL)].assign(
        accelerator=summary["accelerator"], peak_gflops=peak_gflops, peak_source=peak_source
    )


def beside_published(summary, metrics, utilisation):
    """The published figures beside ours, scaled by the project's peak tables."""
    return published.side_by_side(
        published.read(PUBLISHED),
        summary,
        metrics,
        hardware=pd.read_csv(PUBLISHED_HARDWARE),
        peaks=pd.read_csv(GPU_PEAKS),
        utilisation=utilisation,
    )


def test_published_figures_are_scaled_to_the_peak_of_our_gpu():
    summary = pd.DataFrame(
        [
            gpu_cell(
                "imagenet_synthetic", "resnet50", "native-torch", seconds_per_1000_samples=0.9
            ),
            gpu_cell(
                "imagenet_synthetic", "resnet50", "native-tensorflow", seconds_per_1000_samples=1.1
            ),
            gpu_cell(
                "imdb",
                "imdb_gru",
                "native-torch",
                first_epoch_seconds=9.0,
                steady_epoch_seconds=4.0,
            ),
            # another precision: not scaled by float32 peaks
            gpu_cell("imdb", "imdb_gru", "native-tensorflow", "bfloat16", steady_epoch_seconds=3.0),
        ]
    )
    metrics = summary[list(matrix.CELL)].assign(cpu_model="Test CPU", gpu_model="NVIDIA H200")
    utilisation = utilisation_of(summary, 53900.0, PROBED)
    table = beside_published(summary, metrics, utilisation)
    rows = table.set_index(["workload", "published_hardware", "framework"])
    # DeepLearningFrameworks: PyTorch's ResNet-50 features, 7.7 s per 1,000 images on a K80
    # (one GPU, 4.37 TFLOP/s), would take 7.7 x 4.37 / 53.9 s at our probe's 53.9 TFLOP/s.
    k80 = rows.loc[("resnet50_features", "K80/CUDA 8/cuDNN 6", "PyTorch")]
    assert k80["published_value"] == 7.7 and k80["published_peak_tflops"] == 4.37
    assert k80["our_peak_tflops"] == pytest.approx(53.9)
    assert k80["published_scaled"] == pytest.approx(7.7 * 4.37 / 53.9)
    assert k80["our_peak_source"].startswith("measured: 1 x NVIDIA H200 float32 matmul probe")
    assert k80["our_value"] == 0.9 and k80["our_in_published_unit"] == 0.9  # ours unscaled
    p100 = rows.loc[("resnet50_features", "P100/CUDA 8/cuDNN 6", "Tensorflow")]
    assert p100["published_scaled"] == pytest.approx(1.8 * 9.3 / 53.9)
    # The GRU's 31 s are 3 epochs, the first included: ours as 9 + 2 x 4 s.
    gru = rows.loc[("imdb_gru", "K80/CUDA 8/cuDNN 6", "PyTorch")]
    assert gru["published_epochs"] == 3 and gru["our_in_published_unit"] == 9.0 + 2 * 4.0
    assert gru["published_scaled"] == pytest.approx(31 * 4.37 / 53.9)
    bf16 = rows.loc[("imdb_gru", "P100/CUDA 8/cuDNN 6", "Tensorflow")]
    assert bf16["our_value"] == 3.0 and pd.isna(bf16["our_peak_tflops"])
    assert pd.isna(bf16["published_scaled"]) and "bfloat16" in bf16["our_peak_source"]
    assert pd.isna(bf16["our_in_published_unit"])  # no first epoch in the summary
    # Published, not measured by us: its peak stated, nothing scaled to.
    cntk = rows.loc[("resnet50_features", "K80/CUDA 8/cuDNN 6", "CNTK")]
    assert cntk["published_peak_tflops"] == 4.37 and pd.isna(cntk["published_scaled"])


def test_without_a_probe_ours_is_the_datasheet_peak_and_says_so():
    summary = pd.DataFrame(
        [gpu_cell("imagenet_synthetic", "resnet50", "native-torch", seconds_per_1000_samples=0.9)]
    )
    metrics = summary[list(matrix.CELL)].assign(cpu_model="Test CPU", gpu_model="NVIDIA H200")
    datasheet = "1 x H200 FP32 67 TFLOP/s (NVIDIA H200 datasheet)"
    table = beside_published(summary, metrics, utilisation_of(summary, 67000.0, datasheet))
    rows = table.set_index(["workload", "published_hardware", "framework"])
    row = rows.loc[("resnet50_features", "P100/CUDA 8/cuDNN 6", "PyTorch")]
    assert row["our_peak_tflops"] == 67.0
    assert row["our_peak_source"] == "datasheet (no GPU probe ran): " + datasheet
    assert row["published_scaled"] == pytest.approx(1.9 * 9.3 / 67)
    # No peak in the utilisation table (a GPU not in gpu_peaks.csv, no probe): empty, and why.
    table = beside_published(
        summary, metrics, utilisation_of(summary, float("nan"), "no peak for GPU 'Some GPU'")
    )
    measured = table[table["our_value"].notna()]
    assert measured["published_scaled"].isna().all()
    assert (measured["our_peak_source"] == "no peak: no peak for GPU 'Some GPU'").all()


def test_an_imported_cell_without_flops_is_scaled_by_its_datasheet():
    """An imported record of a workload this config does not run (no FLOPs:
    no utilisation row): still beside the published figures, its GPU named,
    its peak the datasheet's."""
    summary = pd.DataFrame(
        [gpu_cell("imagenet_synthetic", "resnet50", "native-torch", seconds_per_1000_samples=0.35)]
    )
    metrics = summary[list(matrix.CELL)].assign(cpu_model="Test CPU", gpu_model="NVIDIA H200")
    table = beside_published(summary, metrics, utilisation_of(summary, 53900.0, PROBED).iloc[0:0])
    row = table.set_index(["workload", "published_hardware", "framework"]).loc[
        ("resnet50_features", "K80/CUDA 8/cuDNN 6", "PyTorch")
    ]
    assert row["our_value"] == 0.35 and row["our_hardware"].endswith("(NVIDIA H200)")
    assert row["our_peak_tflops"] == 67.0 and row["our_peak_source"].startswith(
        "datasheet: 1 x H200"
    )
    assert row["published_scaled"] == pytest.approx(7.7 * 4.37 / 67)


def test_cpu_rows_of_ours_are_not_scaled():
    summary, metrics = ours()
    utilisation = utilisation_of(summary, 80.0, "CPU float32 matmul probe on host, 2 thread(s)")
    table = beside_published(summary, metrics, utilisation)
    measured = table[table["our_value"].notna()]
    assert len(measured) == 6  # Tensorflow, PyTorch, Keras(TF) on K80 and P100
    assert measured["published_peak_tflops"].notna().all()  # the published side is stated
    assert measured["our_peak_tflops"].isna().all() and measured["published_scaled"].isna().all()
    assert measured["our_peak_source"].str.startswith("not scaled: ours ran on the CPU").all()
    # The summary has no first epoch: ours in the published unit is left empty.
    assert measured["our_in_published_unit"].isna().all()


def test_environment_table_joins_what_runs_of_a_backend_recorded():
    metrics = pd.DataFrame(
        [
            {
                "machine": "m1",
                "backend": "b",
                "environment": "b",
                "accelerator": "cpu",
                "status": "ok",
                "python": "3.11.7",
                "framework": "jax",
                "framework_version": "0.10.2",
                "cpu_model": "X",
                "threads_used": 2,
                "matmul_probe_gflops": g,
                "hostname": host,
            }
            for g, host in ((50.0, "node1"), (70.0, "node2"), (60.0, "node1"))
        ]
    )
    (row,) = hardware.environment_table(metrics).to_dict("records")
    assert row["host"] == "node1, node2" and row["CPU matmul GFLOP/s"] == 60.0
    assert row["version"] == "0.10.2" and row["runs ok"] == 3
    assert row["GPU"] is None


def test_gpu_peaks_are_found_by_the_names_nvidia_smi_gives():
    peaks = pd.read_csv(REPO / "workflow" / "resources" / "gpu_peaks.csv")
    expected = {
        "Tesla K80": 4.37,
        "Tesla V100-SXM2-16GB": 15.7,
        "NVIDIA A100-SXM4-80GB": 19.5,
        "NVIDIA A10": 31.2,
        "NVIDIA H100 80GB HBM3": 67,
        "NVIDIA H100 PCIe": 51,
        "NVIDIA L4": 30.3,
    }
    for name, fp32 in expected.items():
        assert hardware.gpu_peak(name, peaks)["fp32_tflops"] == fp32, name
    assert hardware.gpu_peak("Some Other GPU", peaks) is None
    assert hardware.gpu_peak(None, peaks) is None


def test_the_relative_speed_heat_map_colours_and_names_each_cell(tmp_path):
    summary = pd.DataFrame(
        [
            {
                "dataset": "d",
                "model": "m",
                "machine": "m1",
                "devices": 0,
                "threads": "all",
                "precision": "float32",
                "compile": "auto",
                "versions": "pinned",
                "accelerator": "cpu",
                "backend": b,
                "status": s,
                "relative_to_fastest": r,
                "vs_fastest": v,
                "noisy": n,
            }
            for b, s, r, v, n in (
                ("a", "ok", 1.0, "fastest", False),
                ("b", "ok", 3.5, "slower", True),
                ("c", "failed", float("nan"), None, None),
                ("d", "not_applicable", float("nan"), None, None),
            )
        ]
    )
    figure = plots_heat_maps.relative_speed_figure(summary)
    axis, colour_bar = figure.axes
    assert figures.tick_labels(axis, "y") == ["a", "b", "c", "d"]
    assert figures.tick_labels(axis) == ["d / m\nCPU"]
    # a row a backend: its time over the fastest's, none where it did not run
    colours = axis.images[0].get_array()
    assert colours.shape == (4, 1)
    assert list(colours[:2, 0]) == [1.0, 3.5]
    assert list(np.ma.getmaskarray(colours)[:, 0]) == [False, False, True, True]
    assert colour_bar.get_ylabel() == "time / fastest backend's time (log scale)"
    # and its text: slower (*) and noisy (~), or why it has no figure
    assert [(text.get_text(), text.get_position()) for text in axis.texts] == [
        ("1.00", (0, 0)),
        ("3.50*~", (0, 1)),
        ("failed", (0, 2)),
        ("n/a", (0, 3)),
    ]
    plots_heat_maps.relative_speed(summary, tmp_path / "heat.png")
    assert figures.png_shows(tmp_path / "heat.png", figure)


def test_utilisation_divides_achieved_flops_by_the_cells_peak():
    from dlbench.analysis import utilisation
    from dlbench.models import flops

    summary = pd.DataFrame(
        [
            {
                "dataset": "digits",
                "model": "mlp",
                "backend": "b",
                "machine": "m1",
                "devices": 0,
                "threads": "all",
                "precision": "float32",
                "compile": "auto",
                "versions": "pinned",
                "accelerator": "cpu",
                "task": "train",
                "status": "ok",
                "samples_per_second": 10_000.0,
                "seconds_per_1000_samples": None,
            },
            {
                "dataset": "digits",
                "model": "mlp",
                "backend": "b",
                "machine": "m1",
                "devices": 2,
                "threads": "all",
                "precision": "float32",
                "compile": "auto",
                "versions": "pinned",
                "accelerator": "gpu",
                "task": "train",
                "status": "ok",
                "samples_per_second": 1e6,
                "seconds_per_1000_samples": None,
            },
            {
                "dataset": "digits",
                "model": "lenet",
                "backend": "b",
                "machine": "m1",
                "devices": 0,
                "threads": "all",
                "precision": "float32",
                "compile": "auto",
                "versions": "pinned",
                "accelerator": "cpu",
                "task": "infer",
                "status": "ok",
                "samples_per_second": None,
                "seconds_per_1000_samples": 0.5,
            },
            {
                "dataset": "digits",
                "model": "lenet",
                "backend": "c",
                "machine": "m1",
                "devices": 0,
                "threads": "all",
                "precision": "float32",
                "compile": "auto",
                "versions": "pinned",
                "accelerator": "cpu",
                "task": "infer",
                "status": "failed",
                "samples_per_second": None,
                "seconds_per_1000_samples": None,
            },
        ]
    )
    metrics = summary[
        [
            "machine",
            "dataset",
            "model",
            "backend",
            "devices",
            "threads",
            "precision",
            "compile",
            "versions",
        ]
    ].assign(
        status="ok",
        threads_used=2,
        matmul_probe_gflops=[50.0, None, 40.0, None],
        gpu_model=[None, "NVIDIA A100-SXM4-80GB", None, None],
        hostname="h",
        cpu_model="X",
    )
    dims = {"input_shape": [28, 28, 1], "classes": 10}
    per_sample = {("digits", m): flops.per_sample(m, dims) for m in ("mlp", "lenet")}
    peaks = pd.read_csv(REPO / "workflow" / "resources" / "gpu_peaks.csv")
    table = utilisation.table(summary, metrics, per_sample, peaks)
    assert len(table) == 3  # the failed cell has no rate
    cpu, gpu, infer = table.to_dict("records")
    training = per_sample[("digits", "mlp")]["training"]
    assert cpu["achieved_gflops"] == pytest.approx(training * 1e4 / 1e9)
    # the machine's peak: the fastest probe of all its runs, whichever backend ran them
    assert cpu["peak_gflops"] == infer["peak_gflops"] == 50.0
    assert cpu["mfu"] == pytest.approx(cpu["achieved_gflops"] / 50)
    assert "probe on h, 2 thread(s): fastest of its 2 runs" in cpu["peak_source"]
    assert gpu["peak_gflops"] == pytest.approx(2 * 19_500) and "A100" in gpu["peak_source"]
    assert infer["samples_per_second"] == 2000
    assert infer["achieved_gflops"] == pytest.approx(
        per_sample[("digits", "lenet")]["forward"] * 2000 / 1e9
    )
    assert utilisation.shown(table)["mfu"].str.endswith("%").all()


def test_utilisation_takes_the_peak_of_the_precision_that_ran():
    from dlbench.analysis import utilisation
    from dlbench.models import flops

    cells = [
        ("cpu", 0, "float32"),
        ("cpu", 0, "mixed_bfloat16"),
        ("cpu", 0, "mixed_float16"),
        ("gpu", 1, "mixed_bfloat16"),
    ]
    summary = pd.DataFrame(
        [
            {
                "dataset": "digits",
                "model": "mlp",
                "backend": "b",
                "machine": "m1",
                "devices": devices,
                "threads": "all",
                "precision": precision,
                "compile": "auto",
                "versions": "pinned",
                "accelerator": accelerator,
                "task": "train",
                "status": "ok",
                "samples_per_second": 10_000.0,
                "seconds_per_1000_samples": None,
            }
            for accelerator, devices, precision in cells
        ]
    )
    metrics = summary[list(matrix.CELL)].assign(
        status="ok",
        threads_used=2,
        matmul_probe_gflops=[50.0, 50.0, 50.0, None],
        gpu_model=[None, None, None, "NVIDIA A100-SXM4-80GB"],
        hostname="h",
        cpu_model="X",
    )
    probe = {"machine": "m1", "threads_setting": "all", "threads": 2, "hostname": "h"}
    probe.update(size=4096, reached_plateau=True, library="torch")
    probes = [
        dict(probe, precision="float32", dtype="float32", gflops=150.0),
        dict(probe, precision="mixed_bfloat16", dtype="bfloat16", gflops=1.2, size=1024),
        # an interpreter without torch: the probe says why and measures nothing
        {"machine": "m1", "threads_setting": "all", "precision": "mixed_float16", "reason": "no"},
    ]
    dims = {"input_shape": [28, 28, 1], "classes": 10}
    per_sample = {("digits", "mlp"): flops.per_sample("mlp", dims)}
    peaks = pd.read_csv(REPO / "workflow" / "resources" / "gpu_peaks.csv")
    table = utilisation.table(summary, metrics, per_sample, peaks, probes)
    f32, bf16, f16, gpu = table.to_dict("records")
    assert f32["peak_gflops"] == 150.0 and "float32 matmul probe" in f32["peak_source"]
    # bfloat16 emulated by this CPU's torch, slower than float32: float32's peak bounds it
    assert bf16["peak_gflops"] == 150.0 and "float32 matmul probe" in bf16["peak_source"]
    assert "faster than its bfloat16 probe: 1.2 GFLOP/s" in bf16["peak_source"]
    # no probe in float16 here: no peak rather than float32's
    assert pd.isna(f16["peak_gflops"]) and pd.isna(f16["mfu"])
    assert f16["peak_source"] == "no mixed_float16 probe on this machine: MFU not computed"
    assert gpu["peak_gflops"] == pytest.approx(312_000) and "half precision" in gpu["peak_source"]
    assert gpu["datasheet_gflops"] == gpu["peak_gflops"] and pd.isna(f32["datasheet_gflops"])
    # with the GPU's own probe (rule gpu_probe): its plateau, the datasheet beside it
    measured = dict(probe, device="gpu", gpu_name="NVIDIA A100-SXM4-80GB", gpu_id="0")
    measured.update(precision="mixed_bfloat16", dtype="bfloat16", gflops=240_000.0, size=8192)
    table = utilisation.table(summary, metrics, per_sample, peaks, probes + [measured])
    gpu = table.to_dict("records")[3]
    assert gpu["peak_gflops"] == 240_000.0 and gpu["datasheet_gflops"] == pytest.approx(312_000)
    assert gpu["peak_source"].startswith("1 x NVIDIA A100-SXM4-80GB bfloat16 matmul probe")
    assert "datasheet: 1 x" in gpu["peak_source"]
    assert table.to_dict("records")[0]["peak_gflops"] == 150.0  # a GPU's probe is no CPU's
    # a CPU with bfloat16 instructions: its own probe, the faster
    probes[1] = dict(probes[1], gflops=300.0)
    bf16 = utilisation.table(summary, metrics, per_sample, peaks, probes).to_dict("records")[1]
    assert bf16["peak_gflops"] == 300.0 and "bfloat16 matmul probe" in bf16["peak_source"]
    assert "at 1024 x 1024" in bf16["peak_source"] and "faster" not in bf16["peak_source"]
    # the machine's float32 probe slowed by other work: the runs' own quick probes were faster
    probes[0] = dict(probes[0], gflops=20.0)
    f32 = utilisation.table(summary, metrics, per_sample, peaks, probes).to_dict("records")[0]
    assert f32["peak_gflops"] == 50.0 and "fastest of its 3 runs" in f32["peak_source"]


def test_the_probe_measures_every_size_it_has_time_for_and_keeps_the_best():
    """On numpy's products (the workflow's probe runs torch's, per
    precision): every size is measured up to the first whose product would
    take longer than LONGEST_CALL_S; the peak is the best rate of any."""
    import numpy

    from dlbench.run import probe

    def prepare(size):
        left = numpy.ones((size, size), numpy.float32)
        return lambda: left @ left

    sizes = (32, 64, 128, 256, 512)
    found = probe.plateau(prepare, sizes=sizes)
    measured = found["sizes"]
    rates = [row["gflops"] for row in measured]
    assert found["gflops"] == max(rates) > 0
    assert found["size"] == measured[rates.index(max(rates))]["size"]
    assert [row["size"] for row in measured] == list(sizes[: len(measured)])
    if len(measured) < len(sizes):  # stopped: the next product would take too long
        last = measured[-1]
        assert last["seconds"] * (sizes[len(measured)] / last["size"]) ** 3 > probe.LONGEST_CALL_S
    two = sorted(rates[-2:])
    assert found["reached_plateau"] == (two[1] < probe.PLATEAU_GAIN * two[0])


# --- the report's front page (dlbench.analysis.front_page, workflow/report/workflow.rst) ---

GPU_RUNS = REPO / "records" / "gpu" / "runs"
# The links Snakemake's report defines for its results, which the front page names.
REPORT_RESULTS = {
    "relative_speed.png": "results/plots/relative_speed.png",
    "significance.html": "results/tables/significance.html",
    "summary.csv": "results/summary.csv",
}


def as_report_renders(text, results=REPORT_RESULTS):
    """reStructuredText as Snakemake 9's report renders a description
    (snakemake.report.auto_report): a link target per result, then docutils'
    HTML body, warnings and errors shown in it as system messages."""
    from docutils.core import publish_parts

    links = "".join(
        "\n.. _{}: javascript:app.showResultInfo('{}')".format(name, path)
        for name, path in results.items()
    )
    return publish_parts(text + "\n" + links + "\n", writer="html")["html_body"]


def not_applicable(record, model, backend, reason):
    cell = {key: matrix.record_cell(record)[key] for key in matrix.CELL}
    return dict(cell, model=model, backend=backend, task="train", reason=reason)


@pytest.fixture(scope="module")
def gpu_metrics():
    """The 20 runs an H200 wrote (one repeat each, on its CPU and its GPU)."""
    return collect.metrics(collect.load_records(sorted(GPU_RUNS.rglob("run.json"))))


@pytest.fixture(scope="module")
def gpu_tables(gpu_metrics):
    """Summary and pairs of the H200's runs."""
    return collect.summary(gpu_metrics), stats.pairwise(gpu_metrics, collect.HEADLINE, 0.05)


@pytest.fixture(scope="module")
def repeated_tables():
    """Three repeats of three backends on the digits mlp (real records, their
    epoch times changed: keras-torch twice as slow), a fourth repeat of
    keras-torch that ran out of memory, the fault suite's failed, timed-out
    and unavailable records, and three cells the matrix leaves out."""
    records = []
    seconds = {"keras-jax": (1.0, 1.1, 0.95), "keras-torch": (2.0, 2.1, 1.9)}
    seconds["native-jax"] = (1.05, 0.98, 1.12)
    for backend, times in seconds.items():
        for repeat, time in enumerate(times, 1):
            records.append(
                fixture_record(
                    "train_ok", backend=backend, repeat=repeat, steady_epoch_seconds=time
                )
            )
    records.append(fixture_record("failed_out_of_memory", repeat=4))  # keras-torch, mlp
    records.append(fixture_record("failed_out_of_memory", model="cnn"))
    records += [fixture_record("timeout"), fixture_record("unavailable")]
    left_out = [
        not_applicable(
            records[0],
            model,
            "native-chainer",
            "n/a (chainer has no {0} yet: dlbench/models/workloads/{0}/in_chainer.py)".format(
                model
            ),
        )
        for model in ("mlp", "cnn")
    ]
    left_out.append(not_applicable(records[0], "mlp", "keras-openvino", "n/a (inference only)"))
    metrics = collect.metrics(records)
    return (
        collect.summary(metrics, not_applicable=left_out),
        stats.pairwise(metrics, collect.HEADLINE, 0.05),
    )


def test_front_page_of_single_runs_says_nothing_was_tested(gpu_tables, tmp_path):
    summary, pairs = gpu_tables
    heat_map = tmp_path / "relative_speed.png"
    plots_heat_maps.relative_speed(summary, heat_map)
    front = tmp_path / "front_page.rst"
    front_page.write(summary, pairs, 0.05, heat_map, front)
    text = front.read_text(encoding="utf-8")
    sections = ["Relative speed", "Significant differences", "Not run, and why"]
    assert [text.index(title + "\n===") for title in sections] == sorted(
        text.index(title + "\n===") for title in sections
    )
    assert max(len(line) for line in text.splitlines()) < 1000  # docutils refuses 10,000
    assert len(pairs) == 7 and pairs["p_holm"].isna().all()
    assert "None of the 7 pair(s) of backends was tested: each side needs two repeats" in text
    assert "Every cell of the matrix ran" in text
    page = as_report_renders(text)
    assert "system-message" not in page
    # the heat-map is in the page itself, and opens the result in the report
    uri = front_page.image_uri(heat_map)
    assert 'src="{}"'.format(uri) in page
    assert base64.b64decode(uri.split(",", 1)[1]) == heat_map.read_bytes()
    assert "javascript:app.showResultInfo('results/plots/relative_speed.png')" in page


def test_front_page_lists_significant_pairs_and_what_did_not_run(repeated_tables):
    summary, pairs = repeated_tables
    found = front_page.significant_pairs(pairs)
    # keras-torch is twice as slow as either JAX backend; the JAX backends do not differ
    assert sorted(zip(found["faster"], found["slower"])) == [
        ("keras-jax", "keras-torch"),
        ("native-jax", "keras-torch"),
    ]
    assert found["ratio"].iloc[0] >= found["ratio"].iloc[1]
    groups = front_page.not_run_groups(summary)
    assert [g["status"] for g in groups] == [
        "failed",
        "timeout",
        "unavailable",
        "partial",
        "not_applicable",
        "not_applicable",
    ]
    failed, timeout, unavailable, partial, chainer, openvino = groups
    assert failed["backends"] == ["keras-torch"] and failed["workloads"] == ["digits / cnn"]
    assert failed["reason"] == "out of memory (MemoryError)"
    assert timeout["reason"].startswith("timeout: no result after 45 s")
    assert unavailable["reason"].startswith("environment keras-tensorflow unavailable")
    assert partial["reason"] == "3 of 4 repeats ok; out of memory (MemoryError)"
    # one reason that names each cell's model: one line for both cells
    assert chainer["cells"] == 2 and chainer["backends"] == ["native-chainer"]
    assert chainer["workloads"] == ["digits / cnn", "digits / mlp"]
    assert chainer["reason"] == (
        "n/a (chainer has no ‹model› yet: dlbench/models/workloads/‹model›/in_chainer.py)"
    )
    assert openvino["reason"] == "n/a (inference only)" and openvino["cells"] == 1

    text = front_page.page(summary, pairs, 0.05)
    assert "2 of 3 tested pair(s) of backends differ significantly" in text
    assert "**keras-jax** faster than keras-torch, time ratio 1.97 [" in text
    assert "Of 9 cells, 3 did not run or failed, 1 lost some repeats" in text
    assert "3 are left out of the matrix by design (n/a)" in text
    page = as_report_renders(text)
    assert "system-message" not in page
    # reasons are shown as written, not read as markup
    assert "(timeout_minutes)" in page and "in_chainer.py" in page
    assert page.index("failed</strong>") < page.index("not in the matrix</strong>")
    assert "javascript:app.showResultInfo('results/tables/significance.html')" in page
    none = front_page.significance_section(pairs.assign(where="w", significant=False), 0.05)
    assert "None of the 3 tested pair(s) of backends differ" in none[1]
    assert not [line for line in none if line.startswith("- ")]


def test_front_page_names_the_setting_a_reason_holds_for(gpu_metrics):
    """On the H200's cells (CPU and GPU, eager and compiled): a reason shared
    by cells on both devices names what they share, compile=eager; one cell
    names its whole setting."""
    (record,) = collect.load_records(
        [
            GPU_RUNS / "vm-nvidia-h200/digits/mlp/native-torch/devices=1/threads=all"
            "/precision=float32/compile=eager/rep1/run.json"
        ]
    )
    eager = "n/a (eager: JAX runs compiled by design (jax.jit))"
    left_out = [
        dict(not_applicable(record, model, "keras-jax", eager), devices=devices)
        for model in ("mlp", "deep_mnist")
        for devices in (0, 1)
    ]
    left_out.append(
        dict(
            not_applicable(
                record, "lenet", "native-cudnn", "n/a (cuDNN computes on NVIDIA GPUs only)"
            ),
            devices=0,
            task="infer",
        )
    )
    summary = collect.summary(gpu_metrics, not_applicable=left_out)
    jax, cudnn = front_page.not_run_groups(summary)
    assert jax["cells"] == 4 and jax["reason"] == eager and jax["setting"] == "compile=eager"
    assert jax["workloads"] == ["digits / deep_mnist", "digits / mlp"]
    assert cudnn["setting"] == "CPU, compile=eager"
    text = "\n".join(front_page.not_run_section(summary))
    assert "keras-jax on digits / deep\\_mnist, digits / mlp (compile=eager): n/a (eager" in text


def test_front_page_stays_short(repeated_tables):
    summary, pairs = repeated_tables
    text = front_page.page(summary, pairs, 0.05)
    short = front_page.not_run_section(summary, most_groups=2, most_workloads=1)
    assert len([line for line in short if line.startswith("- ")]) == 3
    assert short[-2] == "- … and 4 more reason(s), 5 cell(s), in `summary.csv`_"
    assert "native-chainer on digits / cnn and 1 more" in "\n".join(
        front_page.not_run_section(summary, most_workloads=1)
    )
    listed = front_page.significance_section(pairs.assign(where="w"), 0.05, most=1)
    assert listed[-2] == "- … and 1 more in `significance.html`_"
    assert text.count("\n- ") == 2 + 6


def render_description(workdir, config_path, files):
    """workflow/report/workflow.rst as Snakemake 9's report renders it in
    ``workdir``: Jinja (trim_blocks, lstrip_blocks) with snakemake.config and
    ``files`` (the results: a name and a path each), then reStructuredText."""
    from types import SimpleNamespace

    import jinja2

    from dlbench.plan import validation

    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    config = validation.load_schema(config_path)  # any YAML file
    records = [SimpleNamespace(target=name, path=Path(path)) for name, path in files.items()]
    template = (REPO / "workflow" / "report" / "workflow.rst").read_text()
    environment = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    here = Path.cwd()
    try:
        os.chdir(REPO)  # the config's paths are the repository's
        validation.validate_config(config, validation.load_schema(schema), schema)
        os.chdir(workdir)  # Snakemake renders in the workflow's folder: the include is relative
        text = environment.from_string(template).render(
            snakemake=SimpleNamespace(config=config), categories={}, files=records
        )
        return as_report_renders(text, files)
    finally:
        os.chdir(here)


@pytest.mark.parametrize("config", ["smoke.yaml", "smoke-full.yaml", "config.yaml"])
def test_report_front_page_opens_with_the_answer(gpu_tables, tmp_path, config):
    summary, pairs = gpu_tables
    (tmp_path / "results" / "report").mkdir(parents=True)
    front_page.write(
        summary,
        pairs,
        0.05,
        REPO / "docs" / "images" / "relative-speed-h200.png",
        tmp_path / "results" / "report" / "front_page.rst",
    )
    page = render_description(tmp_path, REPO / "config" / config, REPORT_RESULTS)
    assert "system-message" not in page
    order = ["<img ", "Significant differences", "Not run, and why", "<h1>Method</h1>"]
    assert [page.index(text) for text in order] == sorted(page.index(text) for text in order)
    assert "docs/methodology.md" in page
    # results made before the front page: the heat-map's link, then the method
    (tmp_path / "results" / "report" / "front_page.rst").unlink()
    page = render_description(tmp_path, REPO / "config" / config, REPORT_RESULTS)
    assert "system-message" not in page and "<img " not in page
    assert page.index("showResultInfo('results/plots/relative_speed.png')") < page.index("Method")
