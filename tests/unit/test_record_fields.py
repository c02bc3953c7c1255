"""The record's statuses and measured figures are defined once
(dlbench.record.fields): the record's schema, the metrics and the summary
take them from there, and docs/results.md lists them. A figure added there
reaches all of them."""

import json
import math

import pytest

from dlbench.analysis import collect
from dlbench.record import fields, record_schema
from dlbench.record.fields import CellStatus, Metric, Status
from testkit import REPO, fixture_record

ADDED = Metric(
    "first_call_ms",
    ("first_call_ms",),
    "ms",
    fields.INFER,
    True,
    "the first single-sample call, with its compiles",
    {"type": ["number", "null"], "minimum": 0},
)


@pytest.fixture
def with_added_figure(monkeypatch):
    monkeypatch.setattr(fields, "METRICS", fields.METRICS + (ADDED,))
    record_schema.validator.cache_clear()
    yield
    record_schema.validator.cache_clear()


def inference_records(first_calls):
    return [
        fixture_record("infer_ok", repeat=repeat, first_call_ms=value)
        for repeat, value in enumerate(first_calls, 1)
    ]


def test_a_figure_added_in_one_place_reaches_the_schema_the_tables_and_the_docs(
    with_added_figure,
):
    records = inference_records([4.0, 9.0, 5.0])
    assert [record_schema.problems(record) for record in records] == [[], [], []]
    wrong = record_schema.problems(dict(records[0], first_call_ms=-1.0))
    assert wrong == ["first_call_ms: -1.0 is less than the minimum of 0"]
    metrics = collect.metrics(records)
    assert sorted(metrics["first_call_ms"]) == [4.0, 5.0, 9.0]
    summary = collect.summary(metrics)
    assert list(summary["first_call_ms"]) == [5.0]  # the median of the three repeats
    assert "| `first_call_ms` | ms | infer | median over the repeats |" in fields.docs_table()


def test_without_it_the_record_schema_refuses_the_figure():
    (record,) = inference_records([4.0])
    assert record_schema.problems(record) == [
        "(record): Additional properties are not allowed ('first_call_ms' was unexpected)"
    ]


def test_the_schema_file_leaves_the_statuses_and_the_figures_to_fields():
    written = json.loads(record_schema.SCHEMA_PATH.read_text())["properties"]
    assert "status" not in written
    assert [m.name for m in fields.METRICS if len(m.path) == 1 and m.path[0] in written] == []
    schema = record_schema.schema()["properties"]
    assert schema["status"] == {"enum": ["ok", "failed", "timeout", "unavailable", "invalid"]}
    assert schema["latency_ms"]["properties"]["p99"]["description"] == (
        "99th percentile latency of a single-sample call"
    )
    assert schema["latency_ms"]["required"] == ["p50", "p90", "p99", "mean"]


def test_every_run_status_is_a_cell_status_and_both_write_as_their_value():
    assert {s.value for s in Status} < {s.value for s in CellStatus}
    assert str(Status.TIMEOUT) == "timeout" and json.dumps(CellStatus.PARTIAL) == '"partial"'
    assert CellStatus(Status.FAILED.value) == Status.FAILED


def test_the_summary_has_a_median_column_for_each_summarised_figure_and_no_other():
    columns = collect.summary_columns()
    for metric in fields.METRICS:
        assert (metric.name in columns) == metric.summarised, metric.name
    metrics = collect.metrics(inference_records([1.0]))
    for metric in fields.METRICS:
        assert metric.name in metrics


def test_docs_results_lists_every_figure_as_fields_defines_it():
    page = (REPO / fields.DOCS_PAGE).read_text()
    assert fields.with_docs_table(page) == page, "run: python -m dlbench.record.fields"
    for metric in fields.METRICS:
        assert "`{}`".format(metric.name) in page


def test_a_figure_is_read_from_its_path_and_missing_reads_as_none():
    latency = next(m for m in fields.METRICS if m.name == "latency_p50_ms")
    assert latency.value({"latency_ms": {"p50": 0.5}}) == 0.5
    assert latency.value({"latency_ms": None}) is None and latency.value({}) is None
    assert not math.isnan(latency.value({"latency_ms": {"p50": 0.25}}))


def test_the_harness_writes_a_figure_where_its_metric_says(monkeypatch):
    """A figure moved in METRICS (here into a block of its own) is where the
    harness writes it and where the tables read it: no other place names it."""
    from dlbench.run import training

    moved = tuple(
        metric._replace(path=("timing",) + metric.path)
        if metric.name == "first_epoch_seconds"
        else metric
        for metric in fields.METRICS
    )
    monkeypatch.setattr(fields, "METRICS", moved)
    summary = training.epoch_summary([9.0, 2.0, 4.0])
    assert summary["timing"] == {"first_epoch_seconds": 9.0}
    assert "first_epoch_seconds" not in summary and summary["steady_epoch_seconds"] == 3.0
    assert fields.value_of(summary, "first_epoch_seconds") == 9.0
    with pytest.raises(KeyError, match="no measured figure 'first_epoch_ms'"):
        fields.put({}, "first_epoch_ms", 9.0)
