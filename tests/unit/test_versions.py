"""Framework versions as a dimension (dlbench.environments.variants and the
matrix's versions dimension): a variant names only what differs from the env
file, is named by what it installs, is an environment of its own and a cell
of its own; adding one never changes the pinned cells."""

import copy
import json
import os
import sys

import matplotlib.colors
import pandas as pd
import pytest
import yaml
from snakemake.utils import validate

import figures
from dlbench.analysis import plots_comparisons, versions
from dlbench.environments import env_files, variants, venvs
from dlbench.plan import config_rules, matrix, paths, run_spec, targets
from dlbench.run import supervise
from testkit import REPO

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")
OLDER_JAX = {"jax[cpu]": "0.10.1", "jaxlib": "0.10.1"}
OLDER_LABEL = "jax-0.10.1+jaxlib-0.10.1"


def smoke(**changes):
    config = yaml.safe_load((REPO / "config" / "smoke-full.yaml").read_text())
    config = copy.deepcopy(dict(config, **changes))
    validate(config, SCHEMA)
    config_rules.validate(config)
    return config


def test_a_variant_is_named_by_what_it_installs():
    assert variants.label(OLDER_JAX) == OLDER_LABEL
    assert variants.label({"Keras": "3.12.4"}) == "keras-3.12.4"
    assert variants.environment_name("keras-jax", OLDER_LABEL) == "keras-jax@" + OLDER_LABEL
    assert variants.environment_name("keras-jax.cuda", variants.PINNED) == "keras-jax.cuda"
    assert variants.split("keras-jax.cuda@" + OLDER_LABEL) == ("keras-jax.cuda", OLDER_LABEL)
    assert variants.split("keras-jax") == ("keras-jax", variants.PINNED)
    for bad in ({}, {"jax": ">=0.9"}, {"not a name!": "1.0"}):
        with pytest.raises(variants.VariantError):
            variants.label(bad)


def test_a_variant_changes_only_the_pins_it_names():
    pip = ["--extra-index-url https://example.invalid", "keras==3.15.1", "jax[cpu]==0.10.2"]
    applied = variants.apply(pip, dict(OLDER_JAX))
    assert applied == [
        "--extra-index-url https://example.invalid",
        "keras==3.15.1",
        "jax[cpu]==0.10.1",
        "jaxlib==0.10.1",  # not pinned by the file: added
    ]
    spec = env_files.read_spec(REPO / "envs" / "keras-jax.yaml", OLDER_JAX)
    assert "jax[cpu]==0.10.1" in spec["pip"] and "jaxlib==0.10.1" in spec["pip"]
    assert "keras==3.15.1" in spec["pip"] and spec["variant"] == OLDER_JAX
    pinned = venvs.identity(REPO / "envs" / "keras-jax.yaml")
    older = venvs.identity(REPO / "envs" / "keras-jax.yaml", OLDER_JAX)
    assert pinned != older and pinned["python"] == older["python"]
    text = env_files.variant_env_file(REPO / "envs" / "keras-jax.yaml", OLDER_JAX)
    written = yaml.safe_load(text)
    assert written["name"] == "keras-jax"
    assert "jax[cpu]==0.10.1" in written["dependencies"][-1]["pip"]


def test_a_variant_adds_cells_and_leaves_the_pinned_ones_as_they_were():
    pinned = smoke()
    with_older = smoke(versions={"keras-jax": [OLDER_JAX]})
    before, after = set(matrix.runs(pinned)), set(matrix.runs(with_older))
    assert before < after
    added = after - before
    assert {run.backend for run in added} == {"keras-jax"}
    assert {run.versions for run in added} == {OLDER_LABEL}
    assert {run.versions for run in before} == {variants.PINNED}
    # other backends have no cell at keras-jax's variant, not even an n/a one
    assert not [c for c in matrix.not_applicable_cells(with_older) if c["versions"] != "pinned"]
    run = next(iter(added))
    assert run_spec.run_environment(with_older, run) == "keras-jax@" + OLDER_LABEL
    assert run_spec.spec(with_older, run).environment == "keras-jax@" + OLDER_LABEL
    assert "/versions={}/".format(OLDER_LABEL) in paths.run_dir(run)


def test_a_variant_is_checked_before_anything_runs():
    with pytest.raises(matrix.ConfigError, match="versions.native-caffe"):
        smoke(versions={"native-caffe": [OLDER_JAX]})
    with pytest.raises(matrix.ConfigError, match=r"versions.keras-jax\[1\]: .* listed twice"):
        smoke(versions={"keras-jax": [OLDER_JAX, dict(OLDER_JAX)]})
    with pytest.raises(matrix.ConfigError, match="not an exact version"):
        smoke(versions={"keras-jax": [{"jax": "~=0.9"}]})


def test_a_variant_is_an_environment_of_its_own(tmp_path):
    config = smoke(versions={"keras-jax": [OLDER_JAX]}, machine="box")
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        plan = targets.WorkflowTargets(config, REPO, "venv")
        environment = "keras-jax@" + OLDER_LABEL

        class Wildcards(object):
            pass

        wildcards = Wildcards()
        wildcards.environment = environment
        assert plan.env_spec_path(wildcards).endswith("envs/keras-jax.yaml")
        assert yaml.safe_load(plan.env_variant(wildcards)) == OLDER_JAX
        assert plan.environment_marker(environment) == ".venvs/{}/ready.json".format(environment)
        conda_file = plan.env_file(environment)  # conda reads a file: written once
        assert "jaxlib==0.10.1" in open(conda_file).read()
        # an existing interpreter named for the backend holds the pinned versions
        named = dict(config, existing_environments={"keras-jax": "/usr/bin/python3"})
        assert run_spec.existing_python(named, "keras-jax") == "/usr/bin/python3"
        assert run_spec.existing_python(named, environment) is None
    finally:
        os.chdir(before)


def version_frames(steady_by_version, repeats=3, machine="m", cpu="AMD EPYC", model="mlp"):
    """Metrics and epochs of keras-jax's digits ``model`` at each version:
    ``steady_by_version`` maps a version to (JAX's version, steady seconds)."""
    cell = {"machine": machine, "dataset": "digits", "model": model, "backend": "keras-jax"}
    cell.update(devices=0, threads="all", precision="float32", compile="auto", accelerator="cpu")
    metrics, epochs = [], []
    for version, (jax_version, steady) in steady_by_version.items():
        for repeat in range(1, repeats + 1):
            run = dict(cell, versions=version, repeat=repeat)
            metrics.append(
                dict(
                    run,
                    status="ok",
                    task="train",
                    framework="jax",
                    framework_version=jax_version,
                    keras_version="3.15.1",
                    environment=variants.environment_name("keras-jax", version),
                    test_accuracy=0.9 if version == variants.PINNED else 0.88,
                    cpu_model=cpu,
                    cpu_count=2,
                )
            )
            for epoch, seconds in enumerate([5.0, steady, steady * 1.01, steady], start=1):
                epochs.append(dict(run, epoch=epoch, seconds=seconds + 0.001 * repeat))
    empty = pd.DataFrame(columns=list(cell) + ["versions", "repeat", "ms"])
    return pd.DataFrame(metrics), pd.DataFrame(epochs), empty


def check_record(version, losses):
    return {
        "machine": "m",
        "dataset": "digits",
        "model": "mlp",
        "backend": "keras-jax",
        "versions": version,
        "status": "ok",
        "initial_weights": {"loaded": True},
        "check": {"losses": losses},
    }


def steady_median(epochs, **cell):
    """The median steady-state epoch time (epochs 2 onwards, every repeat)
    of the runs of ``cell``, read from the test's own epochs."""
    chosen = epochs[epochs["epoch"] >= 2]
    for column, value in cell.items():
        chosen = chosen[chosen[column] == value]
    return chosen["seconds"].median()


def versions_shown(found):
    """The versions figure of ``found``, read back: its axis, each series'
    points as (the row's label, the speed-up, its interval), and whether
    each series' markers are filled."""
    (axis,) = plots_comparisons.versions_figure(found).axes
    rows = figures.tick_labels(axis, "y")
    series, filled = {}, {}
    for container in axis.containers:
        marker = container.lines[0]
        spans = figures.error_bars(container)
        series[container.get_label()] = [
            (rows[int(y)], x, span)
            for x, y, span in zip(marker.get_xdata(), marker.get_ydata(), spans)
        ]
        face = matplotlib.colors.to_rgba(marker.get_markerfacecolor())
        filled[container.get_label()] = face != matplotlib.colors.to_rgba("white")
    return axis, series, filled


# A pair's row in the versions figure: the workload, its setting (devices 0
# on a CPU: "CPU"; a pair across machines: "older's -> newer's, CPU"), the
# backend and what each version ran.
PAIR_ROW = (
    "digits / {model}\n{setting}  keras-jax: jax 0.9.2, keras 3.15.1 -> jax 0.10.2, keras 3.15.1"
)


def test_the_newer_version_is_set_against_the_older_with_its_interval(tmp_path):
    """The older is read from what ran (JAX 0.9.2 before 0.10.2), whichever
    the pinned one is; twice as fast is significant, the same steps are the
    same, and what the two install differently is listed; the figure shows
    each pair at its speed-up and interval, filled where significant."""
    frames = version_frames({variants.PINNED: ("0.10.2", 0.5), OLDER_LABEL: ("0.9.2", 1.0)})
    markers = {}
    for environment, freeze in (
        ("keras-jax", ["jax==0.10.2", "jaxlib==0.10.2", "keras==3.15.1", "ml-dtypes==0.5.4"]),
        ("keras-jax@" + OLDER_LABEL, ["jax==0.9.2", "jaxlib==0.9.2", "keras==3.15.1"]),
    ):
        markers[environment] = tmp_path / (environment + ".json")
        markers[environment].write_text(json.dumps({"status": "ok", "pip_freeze": freeze}))
    checks = [
        check_record(variants.PINNED, [2.30, 2.10, 1.90]),
        check_record(OLDER_LABEL, [2.30, 2.10 * (1 + 1e-6), 1.90]),
    ]
    installed = versions.installed_by_environment("m", markers)
    found = versions.compare(*frames, checks=checks, installed=installed, draws=200)
    (row,) = found.to_dict("records")
    assert (row["older"], row["newer"]) == (OLDER_LABEL, variants.PINNED)
    assert row["older_versions"] == "jax 0.9.2, keras 3.15.1"
    assert row["speedup"] == pytest.approx(2.0, rel=0.01)
    assert row["speedup_ci_low"] > 1 and row["significant"]
    assert row["accuracy_change"] == pytest.approx(0.02)
    assert row["same_steps"] and row["largest_step_difference"] < 1e-5
    assert row["installed_differences"] == (
        "jax 0.9.2 -> 0.10.2; jaxlib 0.9.2 -> 0.10.2; ml-dtypes absent -> 0.5.4"
    )
    shown = versions.table(found)
    assert shown.iloc[0]["newer's speed-up"].startswith(("1.9", "2.0"))
    assert "significant" in shown.iloc[0]["newer's speed-up"]

    # the figure: a row per pair, top first, at the ratio of the two
    # versions' median steady epochs with its interval, filled where
    # significant; the CNN's pair at the same speed below it, open
    same_speed = version_frames(
        {variants.PINNED: ("0.10.2", 1.0), OLDER_LABEL: ("0.9.2", 1.0)}, model="cnn"
    )
    both = pd.concat([found, versions.compare(*same_speed, draws=200)], ignore_index=True)
    epochs = pd.concat([frames[1], same_speed[1]])
    faster, same = (
        steady_median(epochs, model=model, versions=OLDER_LABEL)
        / steady_median(epochs, model=model, versions=variants.PINNED)
        for model in ("mlp", "cnn")
    )
    assert faster == pytest.approx(1.003 / 0.503) and same == 1.0
    axis, series, filled = versions_shown(both)
    mlp, cnn = (PAIR_ROW.format(model=model, setting="CPU") for model in ("mlp", "cnn"))
    assert figures.tick_labels(axis, "y") == [mlp, cnn]
    (significant,), (not_significant,) = series["significant"], series["not significant"]
    interval = (row["speedup_ci_low"], row["speedup_ci_high"])
    assert significant == (mlp, pytest.approx(faster), pytest.approx(interval))
    assert 1 < interval[0] < faster < interval[1]
    label, speedup, (low, high) = not_significant
    assert (label, speedup) == (cnn, pytest.approx(same)) and low <= same <= high
    assert filled == {"significant": True, "not significant": False}
    assert axis.get_xscale() == "log" and axis.get_title() == "Is the new release faster?"
    assert [1.0, 1.0] in [list(line.get_xdata()) for line in axis.get_lines()]  # no change
    plots_comparisons.versions(both, tmp_path / "versions.png")
    assert figures.png_shows(tmp_path / "versions.png", plots_comparisons.versions_figure(both))
    (axis,) = plots_comparisons.versions_figure(found.iloc[:0]).axes  # no pair: says so
    assert figures.texts(axis) == ["no two versions to compare"]
    assert figures.tick_labels(axis, "y") == []


def test_the_same_speed_is_not_significant_and_other_steps_are_told():
    frames = version_frames({variants.PINNED: ("0.10.2", 1.0), OLDER_LABEL: ("0.9.2", 1.0)})
    checks = [check_record(variants.PINNED, [2.3, 2.1]), check_record(OLDER_LABEL, [2.3, 2.0])]
    (row,) = versions.compare(*frames, checks=checks, draws=200).to_dict("records")
    assert row["speedup"] == pytest.approx(1.0, rel=0.01) and not row["significant"]
    assert row["same_steps"] is False and row["largest_step_difference"] > 0.04
    assert row["installed_differences"] is None  # no environment markers given
    assert versions.table(pd.DataFrame([row]))["what the two install differently"][0] == (
        "not known"
    )
    lone = version_frames({variants.PINNED: ("0.10.2", 1.0)})
    assert versions.compare(*lone).empty


def test_an_unreadable_or_corrupt_marker_is_told_never_read_as_nothing_installed(tmp_path):
    """A marker that cannot be read, or does not parse, leaves what its
    environment installed not known, with the reason in the row and the
    table; a marker that lists nothing is still simply not known."""
    frames = version_frames({variants.PINNED: ("0.10.2", 0.5), OLDER_LABEL: ("0.9.2", 1.0)})
    newer = tmp_path / "keras-jax.json"
    newer.write_text(json.dumps({"status": "ok", "pip_freeze": ["jax==0.10.2"]}))
    older = tmp_path / "older"
    older.mkdir()  # opening it fails: IsADirectoryError, an OSError
    markers = {"keras-jax": str(newer), "keras-jax@" + OLDER_LABEL: str(older)}
    unreadable = "the marker {} could not be read ([Errno 21] Is a directory: {!r})".format(
        older, str(older)
    )
    assert versions.installed(str(older)) == versions.NotKnown(unreadable)
    installed = versions.installed_by_environment("m", markers)
    (row,) = versions.compare(*frames, installed=installed, draws=50).to_dict("records")
    assert row["installed_differences"] == "not known: " + unreadable
    shown = versions.table(pd.DataFrame([row]))
    assert shown["what the two install differently"][0] == "not known: " + unreadable

    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"status": "ok", "pip_fre')  # cut off as it was written
    found = versions.installed(str(corrupt))
    assert isinstance(found, versions.NotKnown)
    assert found.reason.startswith("the marker {} is corrupt: not JSON (".format(corrupt))
    corrupt.write_text("[]")
    assert versions.installed(str(corrupt)) == versions.NotKnown(
        "the marker {} is corrupt: a JSON list, not an object".format(corrupt)
    )
    markers["keras-jax@" + OLDER_LABEL] = str(corrupt)
    installed = versions.installed_by_environment("m", markers)
    (row,) = versions.compare(*frames, installed=installed, draws=50).to_dict("records")
    assert row["installed_differences"].startswith(
        "not known: the marker {} is corrupt".format(corrupt)
    )

    corrupt.write_text(json.dumps({"status": "ok"}))  # a marker of nothing listed
    assert versions.installed(str(corrupt)) == {}
    installed = versions.installed_by_environment("m", markers)
    (row,) = versions.compare(*frames, installed=installed, draws=50).to_dict("records")
    assert row["installed_differences"] is None


def test_two_machines_of_the_same_hardware_compare_the_versions_they_ran(tmp_path):
    """Another machine's imported records, its env file pinning an older JAX:
    set against this machine's where the hardware is the same, with what the
    two installed from this machine's marker and the records; a machine of
    other hardware is left out, and a machine that ran both versions is
    compared on its own."""
    here = version_frames({variants.PINNED: ("0.10.2", 0.5)}, machine="here")
    there = version_frames({variants.PINNED: ("0.9.2", 1.0)}, machine="there")
    other = version_frames({variants.PINNED: ("0.8.0", 3.0)}, machine="xeon", cpu="Intel Xeon")
    frames = [pd.concat(parts, ignore_index=True) for parts in zip(here, there, other)]
    marker = tmp_path / "ready.json"
    marker.write_text(json.dumps({"status": "ok", "pip_freeze": ["jax==0.10.2", "jaxlib==0.10.2"]}))
    check = {"mode": "venv", "mismatches": [], "installed": {"jax": "0.9.2", "jaxlib": "0.9.2"}}
    imported = [{"machine": "there", "environment_name": "keras-jax", "environment_check": check}]
    installed = versions.installed_by_environment("here", {"keras-jax": str(marker)}, imported)
    found = versions.compare(*frames, installed=installed, draws=200)
    (row,) = found.to_dict("records")
    assert (row["machine"], row["newer_machine"]) == ("there", "here")
    assert (row["older_versions"], row["newer_versions"]) == (
        "jax 0.9.2, keras 3.15.1",
        "jax 0.10.2, keras 3.15.1",
    )
    assert row["speedup"] == pytest.approx(2.0, rel=0.01) and row["significant"]
    assert row["installed_differences"] == "jax 0.9.2 -> 0.10.2; jaxlib 0.9.2 -> 0.10.2"
    assert row["same_steps"] is None  # another machine's checks are not imported
    assert versions.table(found)["machine"][0] == "there -> here"
    # the figure's one row names both machines; the Xeon's is not drawn
    _, series, _ = versions_shown(found)
    epochs = pd.concat([here[1], there[1]])
    faster = steady_median(epochs, machine="there") / steady_median(epochs, machine="here")
    interval = (row["speedup_ci_low"], row["speedup_ci_high"])
    label = PAIR_ROW.format(model="mlp", setting="there -> here, CPU")
    shown = (label, pytest.approx(faster), pytest.approx(interval))
    assert series == {"significant": [shown], "not significant": []}

    both = version_frames({variants.PINNED: ("0.10.2", 0.5), OLDER_LABEL: ("0.9.2", 1.0)})
    frames = [pd.concat(parts, ignore_index=True) for parts in zip(both, there)]
    (row,) = versions.compare(*frames, draws=200).to_dict("records")
    assert (row["machine"], row["newer_machine"]) == ("m", "m")
    assert (row["older"], row["newer"]) == (OLDER_LABEL, variants.PINNED)


def test_a_run_record_says_what_its_environment_installed(tmp_path):
    venv = tmp_path / "venv.json"
    venv.write_text(json.dumps({"status": "ok", "pip_freeze": ["ml_dtypes==0.5.4", "jax==0.9.2"]}))
    check, unavailable = supervise.environment_check("venv", str(venv))
    assert check["installed"] == {"ml-dtypes": "0.5.4", "jax": "0.9.2"} and unavailable is None
    existing = tmp_path / "existing.json"
    held = {"jax": "0.10.2", "keras": None}  # keras not installed there
    existing.write_text(json.dumps({"status": "ok", "installed": held, "mismatches": []}))
    check, _ = supervise.environment_check("existing", str(existing))
    assert check["installed"] == {"jax": "0.10.2"}
    assert supervise.environment_check("current", None)[0].get("installed") is None


def test_a_variant_is_built_with_its_pins_and_one_that_cannot_be_is_unavailable(tmp_path):
    """Real venvs from a small env file: the variant's version is installed
    in place of the file's; a version that does not exist leaves a marker
    that says the environment is unavailable and why (its cells say so)."""
    spec = tmp_path / "tiny.yaml"
    version = "{}.{}".format(*sys.version_info[:2])
    spec.write_text(
        "name: tiny\ndependencies:\n  - python={}\n  - pip\n  - pip:\n      - six==1.16.0\n".format(
            version
        )
    )
    marker = tmp_path / "older" / "ready.json"
    venvs.build_or_report(spec, tmp_path / "older", marker, variant={"six": "1.15.0"})
    built = json.loads(marker.read_text())
    assert built["status"] == "ok" and built["variant"] == {"six": "1.15.0"}
    assert "six==1.15.0" in built["pip_freeze"]
    missing = tmp_path / "missing" / "ready.json"
    venvs.build_or_report(
        spec, tmp_path / "missing", missing, variant={"six": "0.0.0.1"}, log_path=tmp_path / "log"
    )
    refused = json.loads(missing.read_text())
    assert refused["status"] == "unavailable" and refused["variant"] == {"six": "0.0.0.1"}
    assert "six==0.0.0.1" in refused["reason"]
