"""Machines and threads as dimensions of the matrix: names, cells, imported
records and the comparison across machines (library level; the workflow
end to end is in test_machines_e2e.py)."""

import hashlib
import json
import tarfile

import numpy as np
import pandas as pd
import pytest
import yaml

import figures
from dlbench.analysis import collect, imported_results, machines
from dlbench.plan import config_rules, matrix, paths, run_spec
from dlbench.record import contract
from dlbench.record.run_spec import RunSpec
from dlbench.run import harness
from testkit import REPO, fixture_record


def test_threads_list_expands_into_cells_of_their_own(smoke_config):
    smoke_config["threads"] = [1, 2]
    runs = matrix.runs(matrix.normalise(smoke_config))
    assert {run.threads for run in runs} == {1, 2}
    one = [run for run in runs if run.threads == 1]
    assert len(one) * 2 == len(runs)
    folders = {paths.run_dir(run) for run in runs}
    assert len(folders) == len(runs)  # no two runs share a folder
    spec = run_spec.spec(smoke_config, one[0])
    assert spec.threads == 1 and spec.machine == matrix.machine_name(smoke_config)


def test_one_threads_value_is_a_list_of_one(smoke_config):
    smoke_config["threads"] = "all"
    assert matrix.normalise(smoke_config)["threads"] == ["all"]
    assert {run.threads for run in matrix.runs(smoke_config)} == {"all"}


def test_threads_or_gpus_the_machine_does_not_have_are_refused_at_planning(smoke_config):
    config = dict(smoke_config, threads=[1, 2, 64])
    with pytest.raises(matrix.ConfigError) as refused:
        config_rules.validate_machine(config, cpus=2)
    assert str(refused.value) == (
        "threads[2]: 64 is more than the 2 CPUs this machine lets the workflow use; "
        'use at most 2 or "all"'
    )
    config_rules.validate_machine(dict(smoke_config, threads=["all", 2]), cpus=2)
    on_gpus = dict(smoke_config, accelerator="gpu")
    on_gpus["workloads"] = [dict(smoke_config["workloads"][0], devices=[0, 1, 4])]
    with pytest.raises(matrix.ConfigError) as refused:
        config_rules.validate_machine(on_gpus, cpus=2, gpus=1)
    assert str(refused.value) == (
        "workloads[0].devices[2]: 4 is more than the 1 GPUs this machine has; use at most 1"
    )
    config_rules.validate_machine(on_gpus, cpus=2, gpus=None)  # jobs that run elsewhere (a cluster)
    with pytest.raises(matrix.ConfigError) as refused:
        config_rules.validate_machine(on_gpus, cpus=2, gpus=0)  # a machine without a GPU
    assert str(refused.value).startswith(
        "workloads[0].devices[1]: 1 asks for GPUs, and this machine has none"
    )
    assert "accelerator: emulated-cpu" in str(refused.value)
    assert len(str(refused.value).splitlines()) <= 3
    emulated = dict(on_gpus, accelerator="emulated-cpu")  # emulated devices are not GPUs
    config_rules.validate_machine(emulated, cpus=2, gpus=1)
    config_rules.validate_machine(emulated, cpus=2, gpus=0)


def test_a_machine_without_a_gpu_has_none_to_plan_on(smoke_config, monkeypatch):
    from dlbench.plan.machine_limits import machine_limits

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    on_gpus = dict(smoke_config, accelerator="gpu", devices=[0, 1])
    assert machine_limits(on_gpus)[1] == 0
    assert machine_limits(dict(on_gpus, devices=[0]))[1] is None  # none asked for
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert machine_limits(on_gpus)[1] == 2


def test_gpus_asked_for_on_the_command_line_keep_the_other_resources():
    """--resources replaces the profile's list: what it leaves out is added
    back at the profile's amounts, and the machine's GPUs where none are named."""
    from dlbench.plan import scheduling

    with open(REPO / "profiles" / "default" / "config.yaml") as handle:
        profile = yaml.safe_load(handle)["resources"]
    assert profile == scheduling.LOCAL_RESOURCES
    assert scheduling.missing_resources(["gpu"], gpus=4) == scheduling.LOCAL_RESOURCES
    assert scheduling.missing_resources(list(profile), gpus=4) == {"gpu": 4}
    assert scheduling.missing_resources(list(profile) + ["gpu"], gpus=4) == {}
    assert scheduling.missing_resources(["cpu_exclusive"], gpus=None) == {
        "theano_compile_cache": 1,
        "pytensor_compile_cache": 1,
    }


def test_a_run_given_fewer_cpus_than_its_threads_is_unavailable_not_mislabelled():
    from dlbench.host import runtime
    from dlbench.run import supervise

    cpus = len(runtime.available_cpus())
    spec = RunSpec("digits", "mlp", "keras-jax", 42, {})
    assert supervise.threads_not_available(spec._replace(threads=cpus)) is None
    assert supervise.threads_not_available(spec._replace(threads="all")) is None
    reason = supervise.threads_not_available(spec._replace(threads=cpus + 1))
    assert reason == (
        "threads={}: this run may use {} CPUs; its cell would be labelled with threads it "
        "never had".format(cpus + 1, cpus)
    )


def test_machine_names_are_stable_readable_and_fit_for_paths():
    name = matrix.machine_name(
        {}, host="gpu07.cluster.example.org", processor="NVIDIA A100-SXM4-80GB"
    )
    assert name == "gpu07-nvidia-a100-sxm4-80gb"
    cpu = matrix.machine_name(
        {}, host="laptop", processor="Intel(R) Core(TM) i7-8550U CPU @ 1.80GHz"
    )
    assert cpu == "laptop-intel-core-i7-8550u"
    assert matrix.machine_name({"machine": "lab-box"}) == "lab-box"
    assert matrix.machine_name({}) == matrix.machine_name({})  # the same host, the same name


def test_the_record_carries_machine_threads_and_node(tmp_path):
    spec = {
        "machine": "lab-box",
        "dataset": "digits",
        "model": "mlp",
        "backend": "keras-jax",
        "devices": 0,
        "threads": 2,
        "precision": "mixed_bfloat16",
        "compile": "eager",
        "versions": "pinned",
        "dimensions": list(matrix.DIMENSION_NAMES),
        "repeat": 1,
        "task": "train",
        "seed": 1,
        "hyper": {},
    }
    record = harness.base_record(RunSpec.from_json(spec))
    assert record["record_version"] == contract.RECORD_VERSION
    assert (record["machine"], record["threads"], record["devices"]) == ("lab-box", 2, 0)
    assert (record["precision"], record["compile"]) == ("mixed_bfloat16", "eager")
    assert record["node"]


def record(machine="other", backend="keras-jax", repeat=1, seconds=1.0, **changes):
    made = fixture_record(
        "train_ok", machine=machine, backend=backend, repeat=repeat, steady_epoch_seconds=seconds
    )
    made.update(changes)
    return made


def write(folder, name, content):
    path = folder / name / "run.json"
    path.parent.mkdir(parents=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def digests(folder):
    return {
        path: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in folder.rglob("*")
        if path.is_file()
    }


def test_an_import_refuses_bad_records_by_name_and_changes_nothing(tmp_path):
    folder = tmp_path / "other"
    good = write(folder, "good", record())
    write(folder, "second", record(backend="native-jax"))
    truncated = write(folder, "truncated", json.dumps(record(repeat=2))[:40])
    future = write(folder, "future", record(repeat=3, record_version=99))
    colliding = write(folder, "colliding", record(machine="here", repeat=4))
    missing = write(folder, "missing", {k: v for k, v in record(repeat=5).items() if k != "task"})
    twice = write(folder, "twice", record())
    before = digests(folder)
    accepted, verdicts = imported_results.import_records([folder], local_machine="here")
    assert digests(folder) == before
    assert [(r["backend"], r["repeat"]) for r in accepted] == [
        ("keras-jax", 1),
        ("native-jax", 1),
    ]
    reasons = {v["record"]: v["reason"] for v in verdicts if not v["accepted"]}
    assert "does not parse" in reasons[str(truncated)]
    assert "record_version 99" in reasons[str(future)]
    assert "this machine's name" in reasons[str(colliding)]
    assert "'task' is a required property" in reasons[str(missing)]
    assert "same run" in reasons[str(twice)] and str(good) in reasons[str(twice)]
    assert len(verdicts) == 7


def test_an_import_refuses_numbers_that_cannot_be_measurements(tmp_path):
    folder = tmp_path / "other"
    nan_steady = write(folder, "nan", json.dumps(record(seconds=float("nan"))))
    epochs = record(repeat=2)["epochs"]
    epochs[1] = dict(epochs[1], loss=float("inf"))
    inf_loss = write(folder, "inf", json.dumps(record(repeat=2, epochs=epochs)))
    too_long = write(folder, "long", record(repeat=3, seconds=600.0))  # the run took 8 s
    fine = write(folder, "fine", record(repeat=4))
    accepted, verdicts = imported_results.import_records([folder], local_machine="here")
    assert [r["repeat"] for r in accepted] == [4]
    reasons = {v["record"]: v["reason"] for v in verdicts if not v["accepted"]}
    assert reasons[str(nan_steady)] == "steady_epoch_seconds is nan: not a measurement"
    assert reasons[str(inf_loss)] == "epochs[1].loss is inf: not a measurement"
    assert reasons[str(too_long)] == ("steady_epoch_seconds 600 is longer than the whole run (8 s)")
    assert str(fine) not in reasons


def test_an_archive_imports_like_its_folder(tmp_path):
    folder = tmp_path / "runs" / "other"
    write(folder, "a", record())
    write(folder, "b", record(repeat=2))
    archive = tmp_path / "other.tar.gz"
    with tarfile.open(archive, "w:gz") as packed:
        packed.add(folder, arcname="other")
    from_archive, _ = imported_results.import_records([archive], "here")
    from_folder, _ = imported_results.import_records([folder], "here")
    assert from_archive == from_folder and len(from_archive) == 2
    with pytest.raises(FileNotFoundError, match="no such results folder"):
        imported_results.import_records([tmp_path / "absent"], "here")


def test_an_imported_older_record_is_read_as_the_current_version():
    """The H200's version 2 records (records/gpu), imported, stand in
    the tables as this machine's own would: at the dimensions they predate
    (versions pinned), saying so, so that no table grouped by the cell drops them."""
    folder = REPO / "records" / "gpu" / "runs"
    accepted, _ = imported_results.import_records([folder], "here")
    assert len(accepted) == 20
    assert {r["record_version"] for r in accepted} == {contract.RECORD_VERSION}
    # what they found in effect, written as environment, stands as runtime
    assert all(r["runtime"]["gpus"] and "environment" not in r for r in accepted)
    assert all("its environment block read as runtime" in r["read_as"] for r in accepted)
    assert {r["versions"] for r in accepted} == {"pinned"}
    assert all("no manifest of hidden settings" in r["read_as"] for r in accepted)
    # the first campaign's writer predates versions: the reading says what it assumed
    assert any(
        "predating the dimensions it ran at: versions pinned" in r["read_as"] for r in accepted
    )


def test_settings_are_labelled_only_by_what_varies():
    frame = pd.DataFrame(
        {
            "machine": ["a", "a"],
            "devices": [0, 0],
            "threads": ["all", "all"],
            "precision": ["float32", "float32"],
            "compile": ["auto", "auto"],
            "versions": ["pinned", "pinned"],
            "accelerator": ["cpu", "cpu"],
        }
    )
    assert list(collect.point_labels(frame)) == ["CPU", "CPU"]
    frame["machine"] = ["a", "b"]
    frame["threads"] = ["1", "2"]
    assert list(collect.point_labels(frame)) == ["a, CPU, threads=1", "b, CPU, threads=2"]
    frame["precision"] = ["float32", "mixed_bfloat16"]
    frame["compile"] = ["eager", "compiled"]
    assert list(collect.point_labels(frame)) == [
        "a, CPU, threads=1, float32, compile=eager",
        "b, CPU, threads=2, mixed_bfloat16, compile=compiled",
    ]


def anova_frame(seconds):
    """Runs of backends x testbeds from {(backend, testbed): [s, ...]}."""
    return pd.DataFrame(
        [
            record(machine, backend, repeat, value)
            for (backend, machine), values in seconds.items()
            for repeat, value in enumerate(values, 1)
        ]
    )


def test_the_interaction_f_test_matches_the_balanced_anova_formula():
    rng = np.random.default_rng(3)
    cells = {
        (b, m): list(np.exp(rng.normal(mu, 0.05, 3)))
        for (b, m), mu in {
            ("x", "a"): 0.0,
            ("x", "b"): 1.0,
            ("y", "a"): 0.5,
            ("y", "b"): 0.2,
        }.items()
    }
    (row,) = machines.interaction(anova_frame(cells)).to_dict("records")
    logs = {key: np.log(values) for key, values in cells.items()}
    grand = np.mean([v for values in logs.values() for v in values])
    mean = {key: values.mean() for key, values in logs.items()}
    backend = {b: np.mean([mean[(b, m)] for m in "ab"]) for b in "xy"}
    machine = {m: np.mean([mean[(b, m)] for b in "xy"]) for m in "ab"}
    ss_interaction = 3 * sum(
        (mean[(b, m)] - backend[b] - machine[m] + grand) ** 2 for b in "xy" for m in "ab"
    )
    ss_error = sum(((values - values.mean()) ** 2).sum() for values in logs.values())
    assert (row["testbeds"], row["backends"], row["runs"]) == (2, 2, 12)
    assert row["df_interaction"] == 1 and row["df_error"] == 8
    assert row["f_statistic"] == pytest.approx(ss_interaction / (ss_error / 8))
    assert row["ranking_changes"] == "yes" and row["p_value"] < 0.001


def test_a_ranking_that_holds_shows_no_interaction():
    # every backend twice as slow on machine b: the ranking holds
    cells = {
        (b, m): [base * scale * f for f in (0.98, 1.0, 1.03)]
        for b, base in (("x", 1.0), ("y", 3.0))
        for m, scale in (("a", 1.0), ("b", 2.0))
    }
    (row,) = machines.interaction(anova_frame(cells)).to_dict("records")
    assert row["p_value"] > 0.5 and row["ranking_changes"] == "not shown"
    single = {key: values[:1] for key, values in cells.items()}
    (row,) = machines.interaction(anova_frame(single)).to_dict("records")
    assert row["test"] == machines.NOT_TESTABLE


def test_the_comparison_keeps_a_machine_whose_runs_all_failed(tmp_path):
    summary = pd.DataFrame(
        [
            {
                "machine": machine,
                "dataset": "digits",
                "model": "mlp",
                "backend": backend,
                "devices": 0,
                "threads": "all",
                "precision": "float32",
                "compile": "auto",
                "versions": "pinned",
                "accelerator": "cpu",
                "task": "train",
                "status": status,
                "error": None if status == "ok" else "out of memory",
                "headline": "steady_epoch_seconds",
                "headline_median": seconds,
                "headline_ci_low": None,
                "headline_ci_high": None,
            }
            for machine, backend, status, seconds in (
                ("here", "x", "ok", 1.0),
                ("here", "y", "ok", 2.0),
                ("there", "x", "failed", None),
                ("there", "y", "failed", None),
                ("third", "x", "ok", 4.0),
                ("third", "y", "ok", 3.0),
            )
        ]
    )
    table = machines.comparison(summary, ["here"])
    assert list(dict.fromkeys(table["testbed"])) == ["here", "there", "third"]
    there = table[table["machine"] == "there"]
    assert list(there["value"]) == ["failed: out of memory"] * 2
    third = table[table["machine"] == "third"].set_index("backend")
    assert third.loc["x", "ratio_to_reference"] == 4.0 and third.loc["y", "rank"] == 1
    assert set(table["reference"]) == {"here"}
    assert machines.comparison(summary, ["here"], "third")["reference"].iloc[0] == "third"
    shown = machines.shown(table)
    assert "there: median [CI]" in shown.columns
    # the plot: a line a backend through its headline on every machine, the
    # failed cells named where their points would be
    figure = machines.figure_of(table)
    (axis,) = figures.visible_axes(figure)
    assert axis.get_title() == "digits / mlp, CPU" and axis.get_yscale() == "log"
    assert figures.tick_labels(axis) == ["here", "there", "third"]
    shown = figures.lines(axis)
    assert set(shown) == {"x", "y"} and shown["x"][0] == [0, 1, 2] == shown["y"][0]
    assert shown["x"][1] == pytest.approx([1.0, np.nan, 4.0], nan_ok=True)
    assert shown["y"][1] == pytest.approx([2.0, np.nan, 3.0], nan_ok=True)
    assert [(text.get_text(), text.xy[0]) for text in axis.texts] == [("failed", 1)] * 2
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ["x", "y"]
    machines.plot(table, tmp_path / "machines.png")
    assert figures.png_shows(tmp_path / "machines.png", figure, bbox_inches="tight")
    # a panel whose every cell failed (nothing to put on a log scale) says so
    failed_only = machines.comparison(summary[summary["machine"] == "there"], ["there"])
    (axis,) = figures.visible_axes(machines.figure_of(failed_only))
    assert figures.texts(axis) == ["failed", "failed", "no successful run"]
    assert figures.tick_labels(axis) == ["there"] and axis.get_yscale() == "linear"
