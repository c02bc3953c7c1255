"""Op profiles (dlbench.run.op_profiling, dlbench.analysis.op_profiles,
dlbench.analysis.op_categories): every instant of a window belongs to one
op, each framework's table sorts the op names its profiler gives, the
categories and the rest add up to the step, and an op one backend adds
shows in its gap. The profiles of real backends: tests/e2e (test_workflow_e2e)."""

import importlib
import pkgutil

import pytest

from dlbench import catalog
from dlbench.analysis import op_categories, op_profiles
from dlbench.run import op_profilers, op_profiling
from dlbench.run.op_profiling import DEVICE, HOST, OPTIMIZER, Event

FRAMEWORKS = sorted({backend["framework"] for backend in catalog.BACKENDS.values()})
PROFILED = sorted(
    name[len("in_") :]
    for _, name, _ in pkgutil.iter_modules(op_profilers.__path__)
    if name.startswith("in_")
)


def times(events):
    return {(op.name, op.scope): op.seconds for op in op_profiling.exclusive_times(events)}


def test_a_range_keeps_only_the_time_between_its_ops():
    found = times(
        [
            Event("step", 1, 0.0, 10.0, HOST, None),
            Event("mm", 1, 1.0, 4.0, HOST, None),
            Event("add", 1, 4.0, 5.0, HOST, None),
            Event("update", 1, 6.0, 9.0, HOST, OPTIMIZER),
        ]
    )
    assert found == pytest.approx(
        {("step", None): 3.0, ("mm", None): 3.0, ("add", None): 1.0, ("update", OPTIMIZER): 3.0}
    )


def test_ops_at_once_on_two_threads_share_the_time_and_never_exceed_the_window():
    events = [
        Event("conv", "a", 0.0, 4.0, HOST, None),
        Event("mm", "b", 2.0, 6.0, HOST, None),
        Event("relu", "b", 7.0, 8.0, HOST, None),
    ]
    found = times(events)
    assert found == pytest.approx({("conv", None): 3.0, ("mm", None): 3.0, ("relu", None): 1.0})
    assert sum(found.values()) == pytest.approx(7.0)  # the union: 0-6 and 7-8


def test_calls_are_counted_and_an_op_that_outlives_its_parent_is_clipped():
    ops = op_profiling.exclusive_times(
        [
            Event("call", 0, 0.0, 2.0, HOST, None),
            Event("mm", 0, 1.0, 3.0, HOST, None),
            Event("mm", 0, 3.0, 4.0, HOST, None),
        ]
    )
    found = {op.name: op for op in ops}
    assert found["mm"].calls == 2 and found["mm"].seconds == pytest.approx(2.0)
    assert found["call"].seconds == pytest.approx(1.0)


def test_a_device_is_busy_where_any_kernel_ran():
    events = [
        Event("gemm", (0, 7), 0.0, 2.0, DEVICE, None),
        Event("relu", (0, 8), 1.0, 3.0, DEVICE, None),
        Event("launch", 1, 0.0, 5.0, HOST, None),
    ]
    assert op_profiling.busy_seconds(events) == pytest.approx(3.0)


def test_the_window_takes_a_fraction_of_a_second_of_steps_within_an_epoch():
    wanted = op_profiling.WINDOW_SECONDS / 0.01
    assert op_profiling.window_steps(0.01, 1000) == pytest.approx(wanted)
    assert op_profiling.window_steps(2.0, 1000) == op_profiling.MIN_STEPS
    assert op_profiling.window_steps(0.0001, 12) == 12
    assert op_profiling.window_steps(None, 100) == op_profiling.MIN_STEPS


def test_a_framework_without_a_profiler_says_why(tmp_path):
    adapter = type("Adapter", (), {"framework": "no-such-framework"})()
    profiler, reason = op_profiling.profiler_for(adapter, str(tmp_path))
    assert profiler is None and "no-such-framework has no op profiler" in reason


@pytest.mark.parametrize("framework", PROFILED)
def test_each_profiler_follows_the_contract(framework):
    module = importlib.import_module("dlbench.run.op_profilers.in_" + framework)
    assert framework in FRAMEWORKS
    assert issubclass(module.Profiler, op_profiling.OpProfiler) and module.Profiler.name


@pytest.mark.parametrize("framework", PROFILED)
def test_each_framework_table_sorts_the_names_its_profiler_gave(framework):
    table = op_categories.table(framework)
    assert table is not None, "a profiler without a table of categories: " + framework
    assert table.EXAMPLES
    wrong = {
        name: op_categories.category_of(framework, name)
        for name, expected in table.EXAMPLES.items()
        if op_categories.category_of(framework, name) != expected
    }
    assert not wrong
    assert set(table.EXAMPLES.values()) <= set(op_categories.CATEGORY_KEYS)


def test_an_unknown_op_is_other_and_the_optimizer_scope_wins():
    assert op_categories.category_of("torch", "my_custom::op") == op_categories.OTHER
    assert op_categories.category_of("torch", "aten::mm", OPTIMIZER) == op_categories.OPTIMIZER
    assert op_categories.category_of("no-table", "aten::mm") == op_categories.OTHER


def record(backend, samples=1000, batch=100, status="ok"):
    return {
        "machine": "m",
        "dataset": "digits",
        "model": "mlp",
        "backend": backend,
        "devices": 0,
        "threads": "all",
        "precision": "float32",
        "compile": "auto",
        "versions": "pinned",
        "repeat": 1,
        "task": "train",
        "status": status,
        "hyper": {"batch_size": batch},
        "train_samples": samples,
    }


def ops_file(ops, steps=10, window=1.0, profiler="torch.profiler"):
    return {
        "profiler": profiler,
        "steps": steps,
        "window_seconds": window,
        "device_busy_seconds": None,
        "ops": [
            {"name": name, "calls": calls, "seconds": seconds, "place": HOST, "scope": scope}
            for name, calls, seconds, scope in ops
        ],
        "reason": None,
    }


SUMMARY = {"steady_epoch_seconds": 1.0}
DENSE = [
    ("aten::mm", 30, 0.5, None),
    ("aten::add_", 60, 0.1, OPTIMIZER),
    ("aten::relu", 20, 0.05, None),
    ("my_custom::op", 10, 0.05, None),
]


def runs(native_ops, keras_ops, native_window=1.0, keras_window=2.0):
    """native-torch timed at 1 s an epoch of 10 steps, keras-torch at 2 s."""
    return [
        (record("native-torch"), ops_file(native_ops, window=native_window), SUMMARY),
        (
            record("keras-torch"),
            ops_file(keras_ops, window=keras_window),
            {"steady_epoch_seconds": 2.0},
        ),
    ]


def test_categories_and_the_rest_add_up_to_the_step():
    found, per_step = op_profiles.table(runs(DENSE, DENSE))
    native = found[found["backend"] == "native-torch"].iloc[0]
    categories = [key + "_ms" for key in op_categories.CATEGORY_KEYS]
    assert native["window_ms_per_step"] == pytest.approx(100.0)
    assert native[categories].sum() + native["unexplained_ms"] == pytest.approx(100.0)
    assert native["matmul_ms"] == pytest.approx(50.0)
    assert native["optimizer_ms"] == pytest.approx(10.0)
    assert native["coverage"] == pytest.approx(0.7)
    assert native["profiler_cost"] == pytest.approx(1.0)  # timed: 1 s an epoch of 10 steps
    assert native["other_ops"] == "my_custom::op 5 ms"  # listed, never dropped
    names = {name: calls for name, _, calls, _ in per_step[op_profiles.key_of(native)]}
    assert names["aten::mm"] == 3.0  # calls per step


def test_an_added_elementwise_loop_shows_in_that_backends_gap():
    slipped = DENSE + [("aten::mul", 500, 0.9, None)]
    found, per_step = op_profiles.table(runs(DENSE, slipped, keras_window=1.9))
    (gap,) = op_profiles.gaps(found, per_step).to_dict("records")
    assert gap["backend"] == "keras-torch" and gap["fastest"] == "native-torch"
    assert gap["times_slower"] == pytest.approx(2.0)
    assert gap["extra_ms_per_step"] == pytest.approx(90.0)
    assert gap["elementwise_extra_ms"] == pytest.approx(90.0)
    assert gap["where"].startswith("elementwise and activations +90 ms")
    assert gap["ops_that_add_most"].startswith("aten::mul ×50/step +90 ms")
    assert gap["fastest_ops"].startswith("aten::relu")


def test_a_run_without_a_profile_keeps_its_reason_and_repeats_take_the_median():
    failed = op_profiling.not_profiled("the run failed: boom")
    summary = SUMMARY
    repeats = [
        (record("native-torch"), ops_file(DENSE, window=1.0), summary),
        (dict(record("native-torch"), repeat=2), ops_file(DENSE, window=1.2), summary),
        (dict(record("native-torch"), repeat=3), ops_file(DENSE, window=1.4), summary),
        (record("keras-torch", status="failed"), failed, summary),
    ]
    found, _ = op_profiles.table(repeats)
    rows = found.set_index("backend")
    assert rows.loc["native-torch", "window_ms_per_step"] == pytest.approx(120.0)
    assert rows.loc["keras-torch", "reason"] == "the run failed: boom"
    assert (
        rows.loc["keras-torch", "window_ms_per_step"]
        != rows.loc["keras-torch", "window_ms_per_step"]
    )
