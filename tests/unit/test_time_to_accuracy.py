"""Time to accuracy (dlbench.analysis.time_to_accuracy): records with held-out
evaluations -> the target (stated or derived), each seed's steps and seconds
to it, each cell's k of N and MLPerf time, the log-rank pairs, the plot and
the front page's lines."""

import json
import math

import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

import figures
from dlbench.analysis import collect, front_page, plots_time_to_accuracy
from dlbench.analysis import time_to_accuracy as tta
from dlbench.analysis import time_to_accuracy_stats as tta_stats
from dlbench.analysis import time_to_accuracy_tables as tta_tables
from dlbench.plan import targets
from testkit import REPO, fixture_record

EVERY = 4
STEPS_PER_EPOCH = 12
EPOCHS = 3
STATED = {"digits/mlp": {"target": 0.85, "evaluate_every": EVERY}}


def accuracy_at(step, rate=0.08, slip=0, ceiling=0.95):
    """A learning curve: 0.1 before any step, rising towards ``ceiling``;
    ``slip`` steps late where an update slipped (slower learning)."""
    return 0.1 + (ceiling - 0.1) * (1 - math.exp(-rate * max(0, step - slip)))


def record(
    backend="keras-jax",
    repeat=1,
    seconds_per_step=0.1,
    compile_seconds=2.0,
    slip=0,
    ceiling=0.95,
    status="ok",
):
    """A real training record (tests/fixtures/records/train_ok.json) with
    evaluations every EVERY steps over EPOCHS epochs: the first at step 0,
    the training clock ``compile_seconds`` (the first step's compiles) plus
    ``seconds_per_step`` a step, the accuracy ``accuracy_at``."""
    evaluations = []
    for step in range(0, STEPS_PER_EPOCH * EPOCHS + 1, EVERY):
        accuracy = accuracy_at(step, slip=slip, ceiling=ceiling)
        evaluations.append(
            {
                "step": step,
                "epoch": 0 if step == 0 else (step - 1) // STEPS_PER_EPOCH + 1,
                "training_seconds": 0.0 if step == 0 else compile_seconds + seconds_per_step * step,
                "val_loss": 2.4 * (1 - accuracy),
                "val_accuracy": accuracy,
            }
        )
    first_epoch = compile_seconds + seconds_per_step * STEPS_PER_EPOCH
    return fixture_record(
        "train_ok",
        backend=backend,
        repeat=repeat,
        seed=41 + repeat,
        status=status,
        first_epoch_seconds=first_epoch,
        evaluate_every=EVERY,
        evaluations=evaluations,
    )


def analysed(records, settings=STATED, alpha=0.05):
    """The records' runs, pairs and cells, as the rule makes them."""
    runs = tta.per_run(tta.evaluations(records), collect.metrics(records), settings)
    pairs = tta.pairs(runs, alpha)
    return runs, pairs, tta.per_cell(runs, pairs)


def cell_of(cells, backend):
    (index,) = cells.index[cells["backend"] == backend]
    return cells.loc[index]


def test_the_built_records_conform_and_evaluations_are_one_row_each(tmp_path):
    written = []
    for repeat in (1, 2):
        path = tmp_path / "run{}.json".format(repeat)
        path.write_text(json.dumps(record(repeat=repeat)))
        written.append(path)
    records = collect.load_records(written)
    assert [r["status"] for r in records] == ["ok", "ok"]  # not invalid: the schema holds them
    frame = tta.evaluations(records)
    assert list(frame.columns) == tta.EVALUATION_COLUMNS
    assert len(frame) == 2 * 10 and list(frame["step"][:3]) == [0, 4, 8]
    assert list(frame["seed"].unique()) == [42, 43]
    empty = tta.evaluations([fixture_record("train_ok")])
    assert list(empty.columns) == tta.EVALUATION_COLUMNS and not len(empty)


def test_a_stated_target_is_the_configs_number():
    runs, _, cells = analysed([record(repeat=r) for r in (1, 2, 3)])
    assert set(runs["target"]) == {0.85} and set(runs["target_how"]) == {"stated: 0.85"}
    first = next(s for s in range(0, 37, EVERY) if accuracy_at(s) >= 0.85)
    assert set(runs["steps_to_target"]) == {first}
    assert list(runs["seconds_to_target"]) == pytest.approx([2.0 + 0.1 * first] * 3)
    # the first epoch beside it: the target falls in epoch 2, after the whole first epoch
    assert list(runs["of_which_first_epoch"]) == pytest.approx([2.0 + 0.1 * STEPS_PER_EPOCH] * 3)
    assert tta_tables.shown_cells(cells)["target"].iloc[0] == "stated: 0.85"


def test_a_derived_target_is_the_references_median_best_less_the_margin():
    ceilings = {1: 0.90, 2: 0.93, 3: 0.95}
    records = [record(repeat=r, ceiling=c) for r, c in ceilings.items()]
    records += [record("keras-torch", repeat=r, ceiling=0.99) for r in (1, 2, 3)]
    best = {r: accuracy_at(STEPS_PER_EPOCH * EPOCHS, ceiling=c) for r, c in ceilings.items()}
    derived = {"target": {"reference": "keras-jax", "margin": 0.02}, "evaluate_every": EVERY}
    runs, _, cells = analysed(records, {"digits/mlp": derived})
    assert list(runs["target"]) == pytest.approx([best[2] - 0.02] * 6)
    assert set(runs["target_how"]) == {
        "derived: keras-jax's median best val_accuracy over 3 seeds ({:.4g}) less 0.02".format(
            best[2]
        )
    }
    assert (
        tta_tables.shown_cells(cells)["target"]
        .iloc[0]
        .startswith("{:.4g} (derived: ".format(best[2] - 0.02))
    )
    # the loss: its lowest, plus the margin
    lowest = {r: 2.4 * (1 - b) for r, b in best.items()}
    by_loss = dict(derived, metric="val_loss")
    runs, _, _ = analysed(records, {"digits/mlp": by_loss})
    assert list(runs["target"]) == pytest.approx([lowest[2] + 0.02] * 6)
    assert "median best val_loss over 3 seeds" in runs["target_how"].iloc[0]
    assert "plus 0.02" in runs["target_how"].iloc[0]


def test_a_backend_slower_per_step_reaches_the_target_later_at_the_same_steps():
    records = [record(repeat=r) for r in (1, 2, 3)]
    records += [record("keras-torch", repeat=r, seconds_per_step=0.3) for r in (1, 2, 3)]
    _, _, cells = analysed(records)
    fast, slow = cell_of(cells, "keras-jax"), cell_of(cells, "keras-torch")
    assert fast["steps_median"] == slow["steps_median"]
    assert slow["time_to_target"] > fast["time_to_target"]
    assert slow["first_epoch_seconds"] > fast["first_epoch_seconds"]
    assert fast["verdict"] == "first to the target"


def test_a_slipped_update_needs_more_steps():
    records = [record(repeat=r) for r in (1, 2, 3)]
    records += [record("keras-torch", repeat=r, slip=8) for r in (1, 2, 3)]
    _, _, cells = analysed(records)
    fast, slow = cell_of(cells, "keras-jax"), cell_of(cells, "keras-torch")
    assert slow["steps_median"] > fast["steps_median"]
    assert slow["time_to_target"] > fast["time_to_target"]


def test_a_target_no_run_reaches_does_not_converge_and_has_no_time():
    records = [record(repeat=r) for r in (1, 2, 3)]
    runs, pairs, cells = analysed(records, {"digits/mlp": {"target": 0.99, "evaluate_every": 4}})
    (cell,) = [row for _, row in cells.iterrows()]
    assert (cell["reached"], cell["seeds"]) == (0, 3)
    assert pd.isna(cell["time_to_target"]) and pd.isna(cell["median_seconds"])
    assert cell["verdict"] == "did not converge (0 of 3 reached)"
    assert not runs["reached"].any() and runs["seconds_to_target"].isna().all()
    assert tta_tables.shown_cells(cells)["time to target (MLPerf)"].iloc[0] == "did not converge"


def test_one_miss_of_three_is_dropped_as_the_slowest_two_are_did_not_converge():
    assert tta_stats.mlperf_time([3.0, 1.0, math.inf]) == 3.0
    assert tta_stats.mlperf_time([3.0, math.inf, math.inf]) is None
    assert tta_stats.mlperf_time([1.0, 2.0, 4.0, 8.0]) == 3.0  # 1 and 8 dropped
    assert tta_stats.mlperf_time([1.0, 2.0]) == 1.5  # under 3: all averaged
    assert tta_stats.mlperf_time([1.0, math.inf]) is None
    assert tta_stats.mlperf_time([]) is None
    # one seed of keras-torch never gets there: its cell keeps a time
    records = [record(repeat=r) for r in (1, 2, 3)]
    records += [record("keras-torch", repeat=r, seconds_per_step=0.1 * r) for r in (1, 2)]
    records.append(record("keras-torch", repeat=3, ceiling=0.8))
    _, _, cells = analysed(records)
    torch = cell_of(cells, "keras-torch")
    assert (torch["reached"], torch["seeds"]) == (2, 3)
    # sorted 1.x s, 2.x s, never: the fastest and the miss dropped, the middle one kept
    assert torch["time_to_target"] == pytest.approx(2.0 + 0.2 * torch["steps_max"])
    assert "one miss dropped as the slowest" in torch["verdict"]
    # two of three miss: did not converge
    records[-2] = record("keras-torch", repeat=2, ceiling=0.8)
    _, _, cells = analysed(records)
    torch = cell_of(cells, "keras-torch")
    assert pd.isna(torch["time_to_target"])
    assert torch["verdict"] == "did not converge (1 of 3 reached)"


def test_logrank_calls_clearly_separated_seeds_significant_and_identical_ones_not():
    seeds = range(1, 6)
    apart = [record(repeat=r, seconds_per_step=0.1 + 0.001 * r) for r in seeds]
    apart += [record("keras-torch", repeat=r, seconds_per_step=0.5 + 0.001 * r) for r in seeds]
    _, pairs, cells = analysed(apart)
    (pair,) = [row for _, row in pairs.iterrows()]
    assert (pair["faster"], pair["slower"]) == ("keras-jax", "keras-torch")
    assert pair["p_holm"] < 0.01 and pair["significant"]
    assert cell_of(cells, "keras-torch")["verdict"].startswith("significantly later than keras-jax")
    same = [
        record(backend, repeat=r, seconds_per_step=0.1 + 0.01 * r)
        for backend in ("keras-jax", "keras-torch")
        for r in seeds
    ]
    _, pairs, cells = analysed(same)
    (pair,) = [row for _, row in pairs.iterrows()]
    assert pair["p_value"] == pytest.approx(1.0) and not pair["significant"]
    assert "not significantly later" in " ".join(cells["verdict"])
    # every seed's time the same: nothing to test, and nothing called significant
    alike = [record(backend, repeat=r) for backend in ("keras-jax", "keras-torch") for r in seeds]
    _, pairs, _ = analysed(alike)
    assert list(pairs["test"]) == [tta.NO_VARIATION] and pairs["p_holm"].isna().all()


def test_three_seeds_a_side_over_three_pairs_cannot_be_significant():
    records = [
        record(backend, repeat=r, seconds_per_step=step)
        for backend, step in (("keras-jax", 0.1), ("keras-torch", 0.5), ("native-torch", 2.0))
        for r in (1, 2, 3)
    ]
    _, pairs, _ = analysed(records)
    assert len(pairs) == 3 and not pairs["significant"].any()
    assert pairs["smallest_p"].min() == pytest.approx(0.0246, abs=1e-4)
    assert pairs["test"].str.contains("cannot be significant").all()


def test_the_plot_draws_each_backend_and_the_target(tmp_path):
    records = [record(repeat=r) for r in (1, 2, 3)]
    records += [record("keras-torch", repeat=r, seconds_per_step=0.3) for r in (1, 2, 3)]
    evaluations = tta.evaluations(records)
    runs, _, _ = analysed(records)
    # as the rule reads them: written and read back
    evaluations.to_csv(tmp_path / "evaluations.csv", index=False)
    runs.to_csv(tmp_path / "runs.csv", index=False)
    evaluations = collect.read_table(tmp_path / "evaluations.csv")
    runs = collect.read_table(tmp_path / "runs.csv")
    figure = plots_time_to_accuracy.time_to_accuracy_figure(evaluations, runs, "digits", "mlp")
    (axis,) = figure.axes
    shown = figures.lines(axis)
    assert set(shown) == {"keras-jax", "keras-torch", "target 0.85"}
    assert shown["target 0.85"][1] == [0.85, 0.85]
    # the median line: the seeds' seconds and accuracy at each evaluation
    seconds, accuracy = shown["keras-torch"]
    assert accuracy == pytest.approx([accuracy_at(s) for s in range(0, 37, EVERY)])
    assert seconds[1] == pytest.approx(2.0 + 0.3 * EVERY)
    assert len(axis.get_lines()) == 6 + 2 + 1  # a thin line a seed, two medians, the target
    assert axis.get_xscale() == "linear" and axis.get_ylabel() == "validation accuracy"
    # a first epoch of compiles: the time axis is logarithmic
    slow_start = [record(repeat=r, compile_seconds=60.0) for r in (1, 2, 3)]
    runs, _, _ = analysed(slow_start)
    figure = plots_time_to_accuracy.time_to_accuracy_figure(
        tta.evaluations(slow_start), runs, "digits", "mlp"
    )
    assert figure.axes[0].get_xscale() == "log"
    path = tmp_path / "plot.png"
    plots_time_to_accuracy.time_to_accuracy(
        tta.evaluations(slow_start), runs, "digits", "mlp", path
    )
    assert figures.png_shows(path, figure)


def test_the_front_page_names_the_first_to_the_target(tmp_path):
    seeds = range(1, 6)
    records = [record(repeat=r, seconds_per_step=0.1 + 0.001 * r) for r in seeds]
    records += [record("keras-torch", repeat=r, seconds_per_step=0.5 + 0.001 * r) for r in seeds]
    _, pairs, cells = analysed(records)
    cells.to_csv(tmp_path / "cells.csv", index=False)
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    cells, pairs = (collect.read_table(tmp_path / n) for n in ("cells.csv", "pairs.csv"))
    lines = front_page.time_to_accuracy_section(cells, pairs, 0.05)
    (line,) = [text for text in lines if text.startswith("- ")]
    fast, slow = pairs["faster_time"].iloc[0], pairs["slower_time"].iloc[0]
    assert line.startswith("- **keras-jax** reaches 0.85 before keras-torch on digits / mlp: ")
    assert "{:.3g} s against {:.3g} s (Holm p = ".format(fast, slow) in line
    # reStructuredText as the report renders it: the tables' links defined, no system message
    from docutils.core import publish_parts

    links = "".join(
        "\n.. _{0}: javascript:app.showResultInfo('results/tables/{0}')".format(name)
        for name in ("time_to_accuracy.html", "time_to_accuracy_pairs.html")
    )
    page = publish_parts("\n".join(lines) + "\n" + links + "\n", writer="html")["html_body"]
    assert "system-message" not in page and "<strong>keras-jax</strong> reaches" in page
    # identical seeds: none significant, and each backend's k of N
    same = [
        record(backend, repeat=r, seconds_per_step=0.1 * r)
        for backend in ("keras-jax", "keras-torch")
        for r in (1, 2)
    ]
    _, pairs, cells = analysed(same)
    text = "\n".join(front_page.time_to_accuracy_section(cells, pairs, 0.05))
    assert "None of the 1 tested pair(s)" in text
    assert "keras-jax 2 of 2, keras-torch 2 of 2" in text


def test_shown_tables_read_as_the_other_tables_do():
    records = [record(repeat=r) for r in (1, 2, 3)]
    records += [record("keras-torch", repeat=r, seconds_per_step=0.3) for r in (1, 2, 3)]
    _, pairs, cells = analysed(records)
    shown = tta_tables.shown_cells(cells)
    assert list(shown.columns) == [
        "workload",
        "devices",
        "backend",
        "target",
        "seeds",
        "reached",
        "steps to target, median [min–max]",
        "time to target (MLPerf)",
        "median time [95 % KM interval]",
        "median first epoch",
        "verdict",
    ]
    assert list(shown["devices"]) == ["CPU", "CPU"] and list(shown["reached"]) == ["3 of 3"] * 2
    assert list(tta_tables.shown_pairs(pairs)["faster"]) == ["keras-jax"]


def plan_of(name, **changes):
    """The plan of config/``name``, with ``changes`` (as tests/unit/test_targets.py makes it)."""
    config = dict(yaml.safe_load((REPO / "config" / name).read_text()), **changes)
    validate(config, str(REPO / "workflow" / "schemas" / "config.schema.yaml"))
    config["machine"] = "box"
    return targets.WorkflowTargets(config, REPO, "venv")


def test_the_plan_has_the_tables_only_where_a_workload_measures_time_to_accuracy():
    plan = plan_of("smoke.yaml")
    assert plan.time_to_accuracy_workloads() == [("digits", "mlp")]
    assert plan.time_to_accuracy_settings() == tta.settings_of(plan.config)
    assert plan.time_to_accuracy_settings()["digits/mlp"]["target"] == 0.85
    inputs = plan.front_page_inputs(None)
    assert inputs["time_to_accuracy_pairs"] == "results/tables/time_to_accuracy_pairs.csv"
    workloads = [
        {key: value for key, value in entry.items() if key != "time_to_accuracy"}
        for entry in plan.config["workloads"]
    ]
    without = plan_of("smoke.yaml", workloads=workloads)
    assert without.time_to_accuracy_workloads() == [] and tta.settings_of(without.config) == {}
    assert "time_to_accuracy" not in without.front_page_inputs(None)
