"""Records -> metrics, epochs, summary, tables and plots."""

import pandas as pd
import pytest

from dlbench.analysis import collect, plots, tables
from dlbench.run import harness
from test_harness import spec_for


@pytest.fixture
def records(tmp_path, numpy_backend, digits_npz, numpy_registry):
    """Three repeats of a real (numpy) run, and one cell that failed."""
    made = []
    for repeat in (1, 2, 3):
        spec = dict(spec_for(numpy_backend, epochs=3), repeat=repeat, seed=repeat)
        path = tmp_path / "ok{}.json".format(repeat)
        made.append(
            harness.run(
                spec, str(digits_npz), str(path), str(tmp_path / "e.csv"), registry=numpy_registry
            )
        )
    broken = dict(spec_for(numpy_backend), model="cnn")
    made.append(
        harness.run(
            broken,
            str(tmp_path / "absent.npz"),
            str(tmp_path / "f.json"),
            str(tmp_path / "f.csv"),
            registry=numpy_registry,
        )
    )
    return collect.load_records(sorted(tmp_path.glob("*.json")))


def test_median_ci_levels():
    assert collect.median_ci([]) == (None, None, None, None)
    assert collect.median_ci([2.0]) == (2.0, None, None, None)
    median, low, high, level = collect.median_ci([3.0, 1.0, 2.0])
    assert (median, low, high, level) == (2.0, 1.0, 3.0, 0.75)
    median, low, high, level = collect.median_ci(list(range(10)))
    assert (median, low, high) == (4.5, 1, 8)
    assert level == pytest.approx(1 - 2 * 11 / 1024)
    assert collect.median_ci(list(range(6)))[3] == pytest.approx(1 - 2 / 64)


def test_metrics_one_row_per_run(records):
    metrics = collect.metrics(records)
    assert len(metrics) == 4
    assert list(metrics["status"]) == ["failed", "ok", "ok", "ok"]  # cnn sorts first
    assert metrics.loc[0, "error"] and "absent.npz" in metrics.loc[0, "error"]
    assert (metrics.loc[1:, "parameters"] == 7850).all()


def test_summary_one_row_per_cell(records):
    summary = collect.summary(collect.metrics(records)).set_index("model")
    assert summary.loc["mlp", "runs_ok"] == 3 and summary.loc["mlp", "status"] == "ok"
    assert summary.loc["mlp", "headline"] == "steady_epoch_seconds"
    assert summary.loc["mlp", "headline_median"] == summary.loc["mlp", "steady_epoch_seconds"]
    assert summary.loc["mlp", "headline_ci_low"] <= summary.loc["mlp", "headline_median"]
    assert summary.loc["mlp", "headline_median"] <= summary.loc["mlp", "headline_ci_high"]
    assert summary.loc["mlp", "ci_level"] == 0.75
    assert summary.loc["cnn", "status"] == "failed" and "absent.npz" in summary.loc["cnn", "error"]


def test_epochs_long_table(records):
    epochs = collect.epochs(records)
    assert len(epochs) == 9 and set(epochs["epoch"]) == {1, 2, 3}
    assert epochs["val_accuracy"].notna().all()


def test_workload_table_and_plots(records, tmp_path):
    summary = collect.summary(collect.metrics(records))
    table, task = tables.workload_table(summary, "digits", "mlp")
    assert task == "train"
    assert list(table["backend"]) == ["numpy-test"]
    cell = table.loc[0, "CPU: s/epoch"]
    assert "[" in cell and float(cell.split()[0]) > 0
    failed = tables.workload_table(summary, "digits", "cnn")[0].loc[0, "CPU: s/epoch"]
    assert failed.startswith("failed: ") and "absent.npz" in failed
    checks = pd.DataFrame(
        [
            {"dataset": "digits", "model": "mlp", "backend": "numpy-test", "verdict": "same steps"},
            {"dataset": "digits", "model": "cnn", "backend": "numpy-test", "verdict": "DEPARTS"},
        ]
    )
    checked, _ = tables.workload_table(summary, "digits", "mlp", checks)
    assert list(checked["same_steps"]) == ["same steps"]
    assert "same_steps" not in table
    text = tables.markdown(table, "digits / mlp", "caption")
    assert "| numpy-test" in text and text.rstrip().endswith("caption")
    page = tables.html(table, "digits / mlp", "a <caption>")
    assert "<td>numpy-test</td>" in page and "a &lt;caption&gt;" in page
    assert "nan" not in page and "nan" not in text
    for draw, frame, name in (
        (plots.epoch_time, summary, "time.png"),
        (plots.convergence, collect.epochs(records), "convergence.png"),
    ):
        draw(frame, "digits", "mlp", tmp_path / name)
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_inference_cells(tmp_path, numpy_backend, digits_npz, numpy_registry):
    from test_harness import infer_spec

    records = []
    for repeat in (1, 2, 3):
        spec = dict(infer_spec(numpy_backend), repeat=repeat)
        path = tmp_path / "infer{}.json".format(repeat)
        records.append(
            harness.run(
                spec, str(digits_npz), str(path), str(tmp_path / "e.csv"), registry=numpy_registry
            )
        )
    records = collect.load_records(sorted(tmp_path.glob("infer*.json")))
    summary = collect.summary(collect.metrics(records))
    assert list(summary["headline"]) == ["latency_p50_ms"]
    assert summary.loc[0, "headline_median"] == pytest.approx(
        sorted(r["latency_ms"]["p50"] for r in records)[1]
    )
    table, _ = tables.workload_table(summary, "digits", "lenet")
    assert list(table.columns[:2]) == ["backend", "CPU: p50 latency ms"]
    assert "s_per_1000" in table.columns
    latencies = collect.latencies(records)
    assert len(latencies) == 3 * 25
    plots.latency(latencies, "digits", "lenet", tmp_path / "latency.png")
    plots.throughput(summary, "digits", "lenet", tmp_path / "throughput.png")
    for name in ("latency.png", "throughput.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_not_applicable_cells_are_shown_not_failed(records):
    cell = {
        "dataset": "digits",
        "model": "mlp",
        "backend": "keras-openvino",
        "machine": "test-machine",
        "devices": 0,
        "threads": 1,
        "precision": "float32",
        "compile": "auto",
        "versions": "pinned",
        "task": "train",
        "reason": "n/a (inference only)",
    }
    summary = collect.summary(collect.metrics(records), not_applicable=[cell])
    row = summary[summary["backend"] == "keras-openvino"].iloc[0]
    assert row["status"] == "not_applicable" and row["runs"] == 0
    table, _ = tables.workload_table(summary, "digits", "mlp")
    shown = table.set_index("backend").loc["keras-openvino", "CPU: s/epoch"]
    assert shown == "n/a (inference only)"


def parity_frame(accuracies, task="train"):
    rows = [
        {"machine": "m1", "dataset": "d", "model": "m", "backend": b, "devices": 0}
        | {"threads": "all", "precision": "float32", "compile": "auto", "versions": "pinned"}
        | {"task": task, "test_accuracy": a}
        for b, a in accuracies.items()
    ]
    return collect.pd.DataFrame(rows)


def test_accuracy_parity_flags_the_backend_off_the_median():
    frame = collect.accuracy_parity(
        parity_frame({"a": 0.90, "b": 0.91, "c": 0.80}), {("d", "m"): 0.02}
    ).set_index("backend")
    assert frame.loc["b", "accuracy_reference"] == 0.90
    assert list(frame["accuracy_parity"]) == ["ok", "ok", "outside"]
    assert frame.loc["c", "accuracy_gap"] == pytest.approx(-0.10)
    row = frame.reset_index().assign(parity=None).iloc[2]
    assert tables._parity_cell(row) == "OUTSIDE ±0.02 (-0.100 vs median)"


def test_accuracy_parity_needs_two_trained_backends():
    alone = collect.accuracy_parity(parity_frame({"a": 0.9}), {("d", "m"): 0.02})
    assert alone["accuracy_parity"].isna().all()
    inference = parity_frame({"a": None, "b": None}, task="infer")
    assert collect.accuracy_parity(inference, {("d", "m"): 0.02})["accuracy_parity"].isna().all()
