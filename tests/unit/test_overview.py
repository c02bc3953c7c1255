"""Published figures beside ours, the hardware table and the heat-map."""

import pandas as pd
import pytest

from dlbench.analysis import hardware, plots, published
from dlbench.plan import matrix
from testkit import REPO

PUBLISHED = REPO / "workflow" / "resources" / "published_results.csv"


def test_project_copy_of_the_published_figures_is_the_shared_reference():
    shared = REPO.parent / "shared" / "reference" / "published_results.csv"
    if shared.exists():  # the project's copy must not drift from the reference
        assert PUBLISHED.read_text() == shared.read_text()
    table = pd.read_csv(PUBLISHED)
    assert set(table["workload"]) <= set(published.WORKLOADS)
    assert set(table["metric"]) <= set(published.OUR_FIGURE)


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
    table = published.side_by_side(pd.read_csv(PUBLISHED), summary, metrics)
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


def test_published_plot_is_written(tmp_path):
    summary, metrics = ours()
    table = published.side_by_side(pd.read_csv(PUBLISHED), summary, metrics)
    published.plot(table, tmp_path / "published.png")
    published.plot(table.iloc[0:0], tmp_path / "empty.png")
    for name in ("published.png", "empty.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


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


def test_relative_speed_heat_map_is_written(tmp_path):
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
    plots.relative_speed(summary, tmp_path / "heat.png")
    assert (tmp_path / "heat.png").read_bytes()[:4] == b"\x89PNG"


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
