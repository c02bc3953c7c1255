"""Records -> metrics, epochs, summary, tables and plots."""

import statistics

import pandas as pd
import pytest

import figures
from dlbench.analysis import collect, plots_convergence, plots_timings, stats, tables
from dlbench.run import harness
from test_harness import spec_for


@pytest.fixture
def records(tmp_path, numpy_backend, digits_npz, numpy_registry):
    """Three repeats of a real (numpy) run, and one cell that failed."""
    made = []
    for repeat in (1, 2, 3):
        spec = spec_for(numpy_backend, epochs=3)._replace(repeat=repeat, seed=repeat)
        path = tmp_path / "ok{}.json".format(repeat)
        made.append(
            harness.run(
                spec, str(digits_npz), str(path), str(tmp_path / "e.csv"), registry=numpy_registry
            )
        )
    broken = spec_for(numpy_backend)._replace(model="cnn")
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
    assert stats.median_ci([]) == (None, None, None, None)
    assert stats.median_ci([2.0]) == (2.0, None, None, None)
    median, low, high, level = stats.median_ci([3.0, 1.0, 2.0])
    assert (median, low, high, level) == (2.0, 1.0, 3.0, 0.75)
    median, low, high, level = stats.median_ci(list(range(10)))
    assert (median, low, high) == (4.5, 1, 8)
    assert level == pytest.approx(1 - 2 * 11 / 1024)
    assert stats.median_ci(list(range(6)))[3] == pytest.approx(1 - 2 / 64)


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
    # the median over the repeats of each record's steady-state epoch
    steady = [r["steady_epoch_seconds"] for r in records if r["model"] == "mlp"]
    assert len(steady) == 3 and len(set(steady)) == 3  # three different figures
    assert summary.loc["mlp", "headline_median"] == statistics.median(steady)
    assert summary.loc["mlp", "headline_ci_low"] <= summary.loc["mlp", "headline_median"]
    assert summary.loc["mlp", "headline_median"] <= summary.loc["mlp", "headline_ci_high"]
    assert summary.loc["mlp", "ci_level"] == 0.75
    assert summary.loc["cnn", "status"] == "failed" and "absent.npz" in summary.loc["cnn", "error"]


def test_epochs_long_table(records):
    epochs = collect.epochs(records)
    assert len(epochs) == 9 and set(epochs["epoch"]) == {1, 2, 3}
    assert epochs["val_accuracy"].notna().all()


def test_workload_table(records):
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


def test_the_epoch_time_plot_shows_each_cells_median_interval_and_first_epoch(records, tmp_path):
    summary = collect.summary(collect.metrics(records))
    ran = [r for r in records if r["model"] == "mlp"]
    steady = sorted(r["steady_epoch_seconds"] for r in ran)
    figure = plots_timings.epoch_time_figure(summary, "digits", "mlp")
    (axis,) = figure.axes
    assert axis.get_title() == "digits / mlp: training time per epoch"
    assert axis.get_ylabel() == "seconds per epoch"
    assert [label.split("\n")[0] for label in figures.tick_labels(axis)] == ["numpy-test"]
    assert len(figures.bars(axis)) == 2  # the steady state and the first epoch
    (median,) = figures.heights(axis, "steady state (median of epochs 2+)")
    assert median == statistics.median(steady)
    # three repeats: the interval is the order statistics' [min, max]
    (container,) = [c for c in axis.containers if c.get_label().startswith("steady")]
    assert figures.error_bars(container) == [(steady[0], steady[-1])]
    first = statistics.median(r["first_epoch_seconds"] for r in ran)
    assert figures.heights(axis, "first epoch") == [first]
    # the failed cell is named where its bar would be, with no bar drawn
    (axis,) = plots_timings.epoch_time_figure(summary, "digits", "cnn").axes
    assert figures.texts(axis) == ["failed"]
    assert [h != h for h in figures.heights(axis, "first epoch")] == [True]  # NaN: no bar
    plots_timings.epoch_time(summary, "digits", "mlp", tmp_path / "time.png")
    assert figures.png_shows(
        tmp_path / "time.png", plots_timings.epoch_time_figure(summary, "digits", "mlp")
    )


def test_the_convergence_plot_shows_the_median_loss_and_accuracy_of_each_epoch(records):
    figure = plots_convergence.convergence_figure(collect.epochs(records), "digits", "mlp")
    assert figure.get_suptitle().startswith("digits / mlp: convergence")
    loss, accuracy = figure.axes[:2]
    assert (loss.get_ylabel(), accuracy.get_ylabel()) == ("training loss", "validation accuracy")
    ran = [r["epochs"] for r in records if r["model"] == "mlp"]
    for axis, column in ((loss, "loss"), (accuracy, "val_accuracy")):
        x, y = figures.lines(axis)["numpy-test"]
        assert x == [1, 2, 3]
        expected = [statistics.median(epochs[i][column] for epochs in ran) for i in range(3)]
        assert y == pytest.approx(expected, rel=1e-12)


def test_inference_cells(tmp_path, numpy_backend, digits_npz, numpy_registry):
    from test_harness import infer_spec

    records = []
    for repeat in (1, 2, 3):
        spec = infer_spec(numpy_backend)._replace(repeat=repeat)
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
    # the latency plot: one box of every timed call of the three repeats
    (axis,) = plots_timings.latency_figure(latencies, "digits", "lenet").axes
    assert axis.get_title() == "digits / lenet: inference latency, batch 1"
    assert [label.split("\n")[0] for label in figures.tick_labels(axis)] == ["numpy-test"]
    calls = sorted(ms for r in records for ms in r["latencies_ms"])
    assert len(calls) == 3 * 25
    assert statistics.median(calls) in figures.horizontal_segments(axis)
    shown = [y for line in axis.get_lines() for y in line.get_ydata()]  # whiskers and outliers
    assert (min(shown), max(shown)) == (calls[0], calls[-1])
    # the throughput plot: the median over the repeats of each record's figure
    (axis,) = plots_timings.throughput_figure(summary, "digits", "lenet").axes
    assert axis.get_title() == "digits / lenet: batched inference"
    assert [label.split("\n")[0] for label in figures.tick_labels(axis)] == ["numpy-test"]
    expected = statistics.median(r["seconds_per_1000_samples"] for r in records)
    assert figures.heights(axis) == [expected]


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
