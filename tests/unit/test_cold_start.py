"""Time to first step: each run's cold start (dlbench.run.harness) in the
metrics, the table of medians per cell and its plot."""

import itertools

import pandas as pd
import pytest

import figures
from dlbench.analysis import cold_start, collect
from testkit import fixture_record

TRAIN = {
    "launch_seconds": 1.5,
    "framework_setup_seconds": 3.0,
    "data_load_seconds": 0.5,
    "model_build_seconds": 1.0,
    "first_step_seconds": 9.0,
    "first_epoch_rest_seconds": 2.0,
}
INFER = dict(TRAIN, first_call_seconds=0.25, warmup_rest_seconds=0.75)
del INFER["first_step_seconds"], INFER["first_epoch_rest_seconds"]


def records():
    train = [
        fixture_record("train_ok", repeat=repeat, cold_start=dict(TRAIN, first_step_seconds=step))
        for repeat, step in ((1, 9.0), (2, 11.0), (3, 10.0))
    ]
    for record in train:
        total = sum(value for key, value in record["cold_start"].items() if "rest" not in key)
        record["cold_start"]["to_first_step_seconds"] = total
    infer = fixture_record("infer_ok", cold_start=dict(INFER, to_first_step_seconds=6.25))
    older = fixture_record("train_ok", backend="native-torch")  # written before cold starts
    failed = fixture_record("failed_out_of_memory")
    return train + [infer, older, failed]


def test_the_metrics_carry_each_stage_and_older_records_leave_them_empty():
    metrics = collect.metrics(records())
    assert {stage + "_seconds" for stage in collect.COLD_START} <= set(metrics.columns)
    older = metrics[metrics["backend"] == "native-torch"]
    assert older["first_step_seconds"].isna().all()


def test_the_table_gives_each_cells_medians_and_the_time_to_first_step():
    table = cold_start.table(collect.metrics(records()))
    (row,) = table[table["task"] == "train"].to_dict("records")  # not the older record's
    assert row["first_step_seconds"] == 10.0  # the median of 9, 11, 10
    assert row["to_first_step_seconds"] == pytest.approx(1.5 + 3.0 + 0.5 + 1.0 + 10.0)
    (infer,) = table[table["task"] == "infer"].to_dict("records")
    assert infer["first_call_seconds"] == 0.25 and pd.isna(infer["first_step_seconds"])
    assert "out of memory" not in " ".join(table["backend"])  # only runs that finished
    shown = cold_start.shown(table)
    assert list(shown.columns[:2]) == ["workload", "backend"]
    assert "first step / call" in shown and "to first step" in shown


def test_the_table_says_where_runs_found_compiled_code_of_earlier_runs():
    """A warm compile cache shortens the first step: Theano's ops (always
    kept), Inductor's kernels only where the run compiled with it."""
    found = records()
    for record, warm in zip(found[:3], (False, True, True)):  # the train cell's repeats
        record["settings"] = dict(record.get("settings") or {}, theano_cache_warm=warm)
    found[3]["settings"] = {  # eager torch: Inductor's cache was not used
        "torch_compile_cache": "/x/torchinductor-cache",
        "compile_cache_warm": True,
        "torch_compile": False,
    }
    metrics = collect.metrics(found)
    older = metrics["backend"] == "native-torch"
    assert metrics.loc[older, "compile_cache_warm"].isna().all()
    repeats = metrics[(metrics["task"] == "train") & (metrics["status"] == "ok") & ~older]
    assert sorted(repeats["compile_cache_warm"]) == [False, True, True]
    table = cold_start.table(metrics)
    (train,) = table[table["task"] == "train"].to_dict("records")
    (infer,) = table[table["task"] == "infer"].to_dict("records")
    assert train["compile_cache"] == "warm in 2 of 3"
    assert pd.isna(infer["compile_cache"])
    assert sorted(cold_start.shown(table)["compile cache"]) == ["", "warm in 2 of 3"]
    assert (
        collect.compile_cache_warm({"jax_compilation_cache": None, "compile_cache_warm": False})
        is None
    )
    assert collect.compile_cache_warm({"jax_compilation_cache": "/j", "compile_cache_warm": True})
    compiled = {"torch_compile_cache": "/t", "compile_cache_warm": False, "jit_compile": True}
    assert collect.compile_cache_warm(compiled) is False


def test_the_plot_stacks_every_stage(tmp_path):
    table = cold_start.table(collect.metrics(records()))
    figure = cold_start.figure_of(table)
    infer, train = figure.axes
    assert [axis.get_title(loc="left") for axis in (infer, train)] == ["digits/lenet", "digits/mlp"]
    assert figures.tick_labels(infer, "y") == ["native-torch (CPU)"]
    assert figures.tick_labels(train, "y") == ["keras-jax (CPU)"]
    # a bar a stage, each starting where the one before it ends: the stages'
    # medians over the repeats (the first step: 9, 11 and 10 s)
    stages = dict(TRAIN, first_step_seconds=10.0)
    for axis, expected in ((train, stages), (infer, INFER)):
        shown = figures.bars(axis)
        starts = list(itertools.accumulate(expected.values(), initial=0.0))[:-1]
        spans = [bar for (bar,) in shown.values()]  # one bar a panel
        assert [width for _, _, width, _ in spans] == list(expected.values())
        assert [x for x, _, _, _ in spans] == pytest.approx(starts)
        names = [cold_start.LABELS[key.replace("_seconds", "")] for key in expected]
        assert list(shown) == names
    assert [text.get_text() for text in figure.legends[0].get_texts()] == list(shown)
    cold_start.plot(table, tmp_path / "cold_start.png")
    assert figures.png_shows(tmp_path / "cold_start.png", figure)
    (axis,) = cold_start.figure_of(table.iloc[0:0]).axes
    assert figures.texts(axis) == ["no run finished"] and not axis.containers
