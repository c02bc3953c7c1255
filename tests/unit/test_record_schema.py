"""The run record's schema: what the harness and the supervisor write
conforms to it, and a record that breaks it is named, never read blank."""

import json
import shutil
import sys

import pytest

from dlbench.analysis import collect
from dlbench.plan import matrix, paths
from dlbench.record import contract, record_schema
from dlbench.record.fields import Status
from dlbench.run import harness, supervise
from test_harness import infer_spec, spec_for
from testkit import FIXTURE_RECORDS, REPO

RUN = "results/runs/lab/digits/mlp/numpy-test/devices=0/threads=1/precision=float32/compile=auto"
RUN += "/versions=pinned"
RUN += "/rep{}/run.json"


def written(path):
    record = json.loads(path.read_text())
    assert record_schema.problems(record) == []
    return record


def test_the_schema_is_valid_and_describes_this_record_version():
    schema = json.loads(record_schema.SCHEMA_PATH.read_text())
    record_schema.validator()  # checks the schema against its meta-schema
    assert schema["properties"]["record_version"] == {"const": contract.RECORD_VERSION}
    assert schema["$id"].endswith("/{}".format(contract.RECORD_VERSION))


def test_every_record_the_harness_writes_conforms(
    tmp_path, numpy_backend, digits_npz, numpy_registry
):
    for name, spec, data in (
        ("train", spec_for(numpy_backend), digits_npz),
        ("infer", infer_spec(numpy_backend), digits_npz),
        ("failed", spec_for(numpy_backend), tmp_path / "absent.npz"),
    ):
        path = tmp_path / "{}.json".format(name)
        harness.run(spec, str(data), str(path), str(tmp_path / "e.csv"), registry=numpy_registry)
        assert written(path)["status"] == ("failed" if name == "failed" else "ok")


def test_every_record_the_supervisor_writes_conforms(tmp_path, digits_npz):
    """A run that dies before it writes a record, one that hangs past its
    time-out, one whose environment is unavailable: each record the
    supervisor writes itself."""
    marker = tmp_path / "env.json"
    marker.write_text(json.dumps({"status": "unavailable", "backend": "keras-jax", "reason": "x"}))
    hang = "import time; time.sleep(600)"
    for name, python, options in (
        ("died", shutil.which("false"), {}),
        ("hung", str(tmp_path / "hang.sh"), {"timeout_s": 2}),
        ("unavailable", sys.executable, {"env_marker": str(marker), "env_mode": "venv"}),
    ):
        (tmp_path / "hang.sh").write_text(
            "#!/bin/sh\nexec {} -c '{}'\n".format(sys.executable, hang)
        )
        (tmp_path / "hang.sh").chmod(0o755)
        path = tmp_path / "{}.json".format(name)
        spec = spec_for("keras-none")  # no such backend: the child fails
        supervise.supervise(
            spec, str(digits_npz), str(path), str(tmp_path / "e.csv"), python=python, **options
        )
        assert written(path)["status"] == {"died": "failed", "hung": "timeout"}.get(
            name, "unavailable"
        )


@pytest.fixture
def run_folder(tmp_path, numpy_backend, digits_npz, numpy_registry):
    """Two real runs of one cell under their RUN_DIR paths."""
    paths = []
    for repeat in (1, 2):
        path = tmp_path / RUN.format(repeat)
        spec = spec_for(numpy_backend)._replace(machine="lab", repeat=repeat)
        harness.run(
            spec, str(digits_npz), str(path), str(tmp_path / "e.csv"), registry=numpy_registry
        )
        paths.append(path)
    return paths


def test_a_version_3_record_reads_as_the_current_one_with_its_runtime(run_folder):
    """Version 3 wrote what the run found in effect as ``environment``: read,
    the block is ``runtime``, in its place, and ``read_as`` says so; the
    record conforms and collects as the current version's own does."""
    current = json.loads(run_folder[0].read_text())
    assert current["record_version"] == contract.RECORD_VERSION == 4
    assert contract.read(current) is current  # the current version: itself
    older = {
        ("environment" if name == "runtime" else name): value for name, value in current.items()
    }
    older["record_version"] = 3
    assert record_schema.problems(older)  # as written, the current schema refuses it
    found = contract.read(older)
    assert found["read_as"] == "version 3; its environment block read as runtime"
    assert list(found) == list(current) + ["read_as"]
    assert dict(found, read_as=None) == dict(current, read_as=None)
    assert record_schema.problems(found) == []
    run_folder[1].write_text(json.dumps(older))
    metrics = collect.metrics(collect.load_records(run_folder))
    assert list(metrics["status"]) == ["ok", "ok"]
    assert metrics["threads_used"].tolist() == [1, 1]
    assert metrics["cpu_model"].nunique() == 1 and metrics["cpu_model"].notna().all()
    # a record of no readable version is left as it is, for the schema to refuse
    assert contract.read(dict(older, record_version=1)) == dict(older, record_version=1)


def test_a_renamed_field_is_named_and_the_run_shown_invalid(run_folder):
    good, renamed = run_folder
    record = json.loads(renamed.read_text())
    record["steady_seconds"] = record.pop("steady_epoch_seconds")
    renamed.write_text(json.dumps(record))
    loaded = collect.load_records(run_folder)
    assert loaded[0] == json.loads(good.read_text())
    assert loaded[1]["status"] == Status.INVALID
    reason = loaded[1]["reason"]
    assert str(renamed) in reason
    assert "'steady_seconds' was unexpected" in reason
    assert "'steady_epoch_seconds' is a required property" in reason
    summary = collect.summary(collect.metrics(loaded))
    assert summary.loc[0, "status"] == "partial" and summary.loc[0, "runs_ok"] == 1
    metrics = collect.metrics(loaded).set_index("repeat")
    assert metrics.loc[2, "status"] == "invalid" and metrics.loc[2, "machine"] == "lab"


def test_a_record_that_does_not_parse_is_shown_invalid(run_folder):
    run_folder[1].write_text(run_folder[1].read_text()[:80])
    (invalid,) = [r for r in collect.load_records(run_folder) if r["status"] == "invalid"]
    assert invalid["repeat"] == 2 and invalid["backend"] == "numpy-test"
    assert "(file): " in invalid["reason"] and str(run_folder[1]) in invalid["reason"]


def test_the_run_path_names_the_cell():
    run = matrix.Run("digits", "mlp", "keras-jax", devices=2, threads=4, repeat=3, machine="m")
    found = paths.run_of_path(REPO / paths.run_dir(run) / "run.json")
    assert matrix.Run(**found) == run
    assert paths.run_of_path("elsewhere/run.json") is None


def test_the_real_records_kept_as_fixtures_conform_and_read():
    """Version 2 records (the fixtures) read as the current version, saying
    what was assumed; as they are, the current schema refuses them."""
    written = {path.stem: json.loads(path.read_text()) for path in FIXTURE_RECORDS.glob("*.json")}
    assert {record["record_version"] for record in written.values()} == {2}
    assert all(record_schema.problems(record) for record in written.values())
    kept = {name: contract.read(record) for name, record in written.items()}
    assert {name: record_schema.problems(record) for name, record in kept.items()} == {
        name: [] for name in kept
    }
    assert all("no manifest" in record["read_as"] for record in kept.values())
    # what the run found in effect, written as environment, is read as runtime
    for name, record in kept.items():
        assert "environment" not in record
        assert record.get("runtime") == written[name].get("environment")
        said = "its environment block read as runtime" in record["read_as"]
        assert said == ("environment" in written[name]), name
    assert kept["train_ok"]["runtime"]["threads"] >= 1
    metrics = collect.metrics(list(kept.values())).set_index(["model", "backend"])
    assert set(metrics["status"]) == {"ok", "failed", "timeout", "unavailable"}
    assert metrics.loc[("mlp", "keras-jax"), "steady_epoch_seconds"] > 0
    assert metrics.loc[("lenet", "native-torch"), "latency_p50_ms"] > 0
