"""The run record's statuses and measured figures, defined once.

- ``Status``: how a run ended (the record's ``status``); ``CellStatus``: how
  a cell's runs ended together (the summary's ``status``).
- ``METRICS``: every figure a run measures, with where the record holds it,
  its unit, its task, whether the summary takes its median over the repeats,
  what it means and the JSON schema of its value. The record's schema
  (``record_schema.schema``) takes these figures' schemas from here,
  ``collect.metrics`` reads them through ``Metric.value``, the summary's
  columns are those ``summarised``, and docs/results.md lists them (a test
  keeps it so). A new figure is one entry here, and the harness writing it.

Imported by the harness in the backend's environment: Python 3.6, no
dataclasses.
"""

import enum
from typing import Any, List, NamedTuple, Optional, Tuple

from dlbench.record.contract import Record, Schema

TRAIN, INFER = "train", "infer"


class Status(str, enum.Enum):
    """How a run ended (the record's ``status``)."""

    OK = "ok"
    FAILED = "failed"  # the framework raised or crashed
    TIMEOUT = "timeout"  # killed after timeout_minutes
    UNAVAILABLE = "unavailable"  # its environment, data or devices were missing
    INVALID = "invalid"  # a model or data of your own that cannot run as given

    def __str__(self):
        return self.value  # as CSV and text show it


# The status the harness's record carries while its run is under way; a
# record that keeps it was cut off (the supervisor writes the real one).
RUNNING = "running"


class CellStatus(str, enum.Enum):
    """How a cell's runs ended together (the summary's ``status``): as its
    runs' when they agree, ``partial`` when some ran, ``not_applicable``
    when the matrix leaves the cell out (the backend cannot do the task)."""

    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    INVALID = "invalid"
    PARTIAL = "partial"
    NOT_APPLICABLE = "not_applicable"

    def __str__(self):
        return self.value


# The cell statuses whose figures stand: every repeat ran, or some did.
MEASURED = (CellStatus.OK, CellStatus.PARTIAL)


class Metric(NamedTuple):
    """One measured figure: ``name`` its column, ``path`` its keys in the
    record, ``task`` the task that measures it (None: both), ``summarised``
    whether the summary shows its median over the repeats, ``schema`` the
    JSON schema of its value in the record."""

    name: str
    path: Tuple[str, ...]
    unit: Optional[str]
    task: Optional[str]
    summarised: bool
    description: str
    schema: Schema

    def value(self, record: Record) -> Any:
        found: Any = record
        for key in self.path:
            found = found.get(key) if isinstance(found, dict) else None
        return found


SECONDS_OR_NULL = {"type": ["number", "null"], "minimum": 0}
NUMBER_OR_NULL = {"type": ["number", "null"]}
LATENCY = {"type": "number", "minimum": 0}

METRICS = (
    Metric(
        "first_epoch_seconds",
        ("first_epoch_seconds",),
        "s",
        TRAIN,
        True,
        "the first epoch, with its compiles and first-call work",
        SECONDS_OR_NULL,
    ),
    Metric(
        "steady_epoch_seconds",
        ("steady_epoch_seconds",),
        "s",
        TRAIN,
        True,
        "the median epoch after the first (none with one epoch)",
        SECONDS_OR_NULL,
    ),
    Metric(
        "samples_per_second",
        ("samples_per_second",),
        "samples/s",
        None,
        True,
        "training samples a second in the steady epochs; inference: at batch_size",
        {"type": ["number", "null"], "exclusiveMinimum": 0},
    ),
    Metric(
        "test_accuracy",
        ("test_accuracy",),
        "fraction",
        TRAIN,
        True,
        "accuracy on the test split after the last epoch",
        {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    ),
    Metric(
        "test_loss",
        ("test_loss",),
        None,
        TRAIN,
        False,
        "loss on the test split after the last epoch",
        NUMBER_OR_NULL,
    ),
    Metric(
        "latency_p50_ms",
        ("latency_ms", "p50"),
        "ms",
        INFER,
        True,
        "median latency of a single-sample call",
        LATENCY,
    ),
    Metric(
        "latency_p90_ms",
        ("latency_ms", "p90"),
        "ms",
        INFER,
        False,
        "90th percentile latency of a single-sample call",
        LATENCY,
    ),
    Metric(
        "latency_p99_ms",
        ("latency_ms", "p99"),
        "ms",
        INFER,
        True,
        "99th percentile latency of a single-sample call",
        LATENCY,
    ),
    Metric(
        "seconds_per_1000_samples",
        ("seconds_per_1000_samples",),
        "s",
        INFER,
        True,
        "seconds to infer 1,000 samples at batch_size",
        {"type": "number", "minimum": 0},
    ),
    Metric(
        "peak_host_memory_mb",
        ("peak_host_memory_mb",),
        "MB",
        None,
        False,
        "the run's largest resident memory on the host",
        {"type": ["number", "null"], "minimum": 0},
    ),
    Metric(
        "peak_device_memory_mb",
        ("peak_device_memory_mb",),
        "MB",
        None,
        True,
        "the largest memory the run held on its GPUs (none on the CPU)",
        {"type": ["number", "null"], "minimum": 0},
    ),
    Metric(
        "replica_max_abs_weight_diff",
        ("replica_max_abs_weight_diff",),
        None,
        TRAIN,
        False,
        "data-parallel runs: the largest weight difference between replicas at the end",
        {"type": ["number", "null"], "minimum": 0},
    ),
    Metric(
        "samples_dropped_per_epoch",
        ("samples_dropped_per_epoch",),
        "samples",
        TRAIN,
        False,
        "samples an epoch leaves out so that every device gets whole batches",
        {"type": "integer", "minimum": 0},
    ),
)


def summarised() -> List[Metric]:
    """The figures whose median over a cell's repeats the summary shows."""
    return [metric for metric in METRICS if metric.summarised]


def metric(name: str) -> Metric:
    """The figure of ``METRICS`` called ``name``."""
    for found in METRICS:
        if found.name == name:
            return found
    raise KeyError("no measured figure {!r} in dlbench.record.fields.METRICS".format(name))


def value_of(record: Record, name: str) -> Any:
    """Figure ``name``'s value in ``record`` (None where it has none)."""
    return metric(name).value(record)


def put(record: Record, name: str, value: Any) -> Any:
    """``record`` (a run's record, or a part the harness merges into one at
    its top) with figure ``name``'s ``value`` at the figure's path: the
    harness writes every figure of ``METRICS`` through here, so that a
    figure moved in the record moves here alone. Returns ``value``."""
    target = record
    path = metric(name).path
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value
    return value


def record_schema_properties(properties: Schema) -> Schema:
    """``properties`` (the record schema's) with every metric's schema at its
    path: a nested path's object gets it among its properties."""
    for metric in METRICS:
        target = properties
        for key in metric.path[:-1]:
            target = target.setdefault(key, {"type": "object"}).setdefault("properties", {})
        target[metric.path[-1]] = dict(metric.schema, description=metric.description)
    return properties


def status_schema() -> Schema:
    return {"enum": [status.value for status in Status]}


# Where docs/results.md lists the figures (``docs_table``, between these).
DOCS_PAGE = "docs/results.md"
DOCS_BEGIN = "<!-- the measured figures: python -m dlbench.record.fields writes this table -->"
DOCS_END = "<!-- end of the measured figures -->"


def docs_table() -> str:
    """The figures as docs/results.md lists them (Markdown)."""
    rows = [
        "| column | unit | task | in the summary | what it is |",
        "|---|---|---|---|---|",
    ]
    for metric in METRICS:
        rows.append(
            "| `{}` | {} | {} | {} | {} |".format(
                metric.name,
                metric.unit or "",
                metric.task or "both",
                "median over the repeats" if metric.summarised else "metrics.csv only",
                metric.description,
            )
        )
    return "\n".join(rows)


def with_docs_table(text: str) -> str:
    """``text`` (the page) with the table between its markers replaced."""
    before, rest = text.split(DOCS_BEGIN, 1)
    _, after = rest.split(DOCS_END, 1)
    return before + DOCS_BEGIN + "\n" + docs_table() + "\n" + DOCS_END + after


if __name__ == "__main__":
    with open(DOCS_PAGE) as handle:
        page = handle.read()
    with open(DOCS_PAGE, "w") as handle:
        handle.write(with_docs_table(page))
