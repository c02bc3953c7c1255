"""Faults cost nothing: real Snakemake runs on a small offline config with
faults injected into single runs (DLBENCH_FAULTS), an environment that
cannot be built, corrupted data files, a killed Snakemake, a second
invocation on the same folder. Every test adds to the tally printed at the
end of the session (tried / survived / lost).

The tests share one working copy and run in order, on an emulated slower
machine: every invocation, its runs with it, is pinned to one core (a 2-core
machine's half, so that no outcome may hang on the speed of the machine the
suite runs on; the time-outs here are the hang's own and far-off ones).
"""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dlbench import catalog
from dlbench.data import stand_ins
from dlbench.environments import variants
from dlbench.host import runtime
from dlbench.record import record_schema
from dlbench.run import integrity
from testkit import (
    FAULT_TALLY,
    INVOCATION_TIMEOUT_S,
    REPO,
    SNAKEMAKE,
    copy_workflow,
    run_json,
    run_snakemake,
    write_config,
)
from workflows import load_test_config

CONFIG = "config/faults.yaml"
BROKEN = "keras-tensorflow"  # its env file pins a tensorflow-cpu that does not exist
BABI_FILE = next(iter(catalog.DATASETS["babi"]["files"]))
# One fault per run; keras-torch's CNN and bAbI are the healthy neighbours
# (bAbI's segfault on native torch, whose run is made again healthy in the
# corrupted-data test: keras-jax's compiled the recurrent loop there, 20 s of
# CPU on an Intel Xeon). The hang is the only run of its workload, whose 15 s
# time-out is its own (it ends the same with a hang or a slow start): every
# other run has the config's 20 minutes, far above what the slowest machine
# of this kind needs for these runs (a minute at most).
FAULTS = {
    ("digits", "mlp", "keras-jax"): ("raise", "failed", "injected framework error"),
    ("babi", "babi_rnn", "native-torch"): ("segfault", "failed", "killed by SIGSEGV"),
    ("digits", "lenet", "keras-jax"): ("hang", "timeout", "timeout: no result after 15 s"),
    ("digits", "mlp", "keras-torch"): ("oom", "failed", "out of memory"),
}
# A version of Keras that does not exist, for keras-torch's MLP only: its own
# environment cannot be built, its cell is unavailable, the pinned ones run.
MISSING_VERSION = {"keras": "0.0.0.1"}
HEALTHY = [("digits", "cnn", "keras-torch"), ("babi", "babi_rnn", "keras-torch")]


def fault_config(mirror):
    smoke = yaml.safe_load((REPO / "config" / "smoke-full.yaml").read_text())
    by_model = {entry["model"]: entry for entry in smoke["workloads"]}
    pinned = variants.PINNED
    workloads = [
        dict(by_model["mlp"], epochs=2, repeats=1),
        dict(
            by_model["cnn"],
            epochs=2,
            train_samples=512,
            versions=[pinned],
            backends=["keras-torch", BROKEN],
        ),
        dict(
            {key: value for key, value in by_model["lenet"].items() if key != "trained_weights"},
            warmup=2,
            latency_samples=20,
            throughput_batches=3,
            backends=["keras-jax"],
            timeout_minutes=0.25,
        ),
        dict(
            by_model["babi_rnn"],
            dataset="babi",
            epochs=2,
            backends=["native-torch", "keras-torch"],
            versions=[pinned],
        ),
    ]
    return dict(
        smoke,
        backends={"keras-jax": {"jit_compile": True}, "keras-torch": {"jit_compile": False}}
        | {"native-torch": {"jit_compile": False}, BROKEN: {"jit_compile": False}},
        workloads=workloads,
        versions={"keras-torch": [MISSING_VERSION]},
        timeout_minutes=20,
        memory_limit_mb=3000,
        data_mirror=str(mirror),
        accuracy_tolerance=1.0,
        # faults in runs, not in the drawing of weights or the equivalence
        # check: each backend draws its own, and no check runs (tests/e2e's
        # built workflow and test_equivalence_mistakes.py exercise those)
        initial_weights="own",
        equivalence_check={"steps": 0},
        # the machine's probe sized as in the tests' config: the tables need a rate
        probe_largest_size=load_test_config()["probe_largest_size"],
    )


def on_one_core():
    """Pins the process that calls it (and so everything it starts) to the
    last CPU it may use: a machine half as fast as a 2-core one. The last,
    not the first: one-thread runs elsewhere in the session (the precision
    workflow's, made in the background) take the first, and two pinned
    processes on one core while the other idles made this suite take 860 s
    instead of 333 in CI."""
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[-1:])


def snakemake(workdir, *args, targets=(), faults=None, check=True):
    env = dict(os.environ)
    env.pop("DLBENCH_FAULTS", None)
    if faults:
        env["DLBENCH_FAULTS"] = faults
    # the targets first: --configfile takes every name that follows it
    return run_snakemake(
        workdir,
        *targets,
        "--configfile",
        CONFIG,
        *args,
        check=check,
        env=env,
        preexec_fn=on_one_core,
    )


def start_snakemake(workdir, *targets, **popen):
    """A workflow invocation in the background, at the tests' priority if
    it is a session of its own (conftest.BuiltWorkflow.start)."""
    nice = runtime.inherited_nice()

    def setup():
        on_one_core()
        runtime.set_autogroup_nice(nice)

    return subprocess.Popen(
        [SNAKEMAKE, *targets, "-j1", "--configfile", CONFIG],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        preexec_fn=setup,
        **popen,
    )


def record(workdir, dataset, model, backend):
    return json.loads((workdir / run_json(dataset, model, backend)).read_text())


def all_records(workdir):
    """Every run record: each must parse (no half-written file, ever) and
    conform to the run record's schema, whoever wrote it."""
    found = {
        path.relative_to(workdir): json.loads(path.read_text())
        for path in (workdir / "results/runs").rglob("run.json")
    }
    assert {path: record_schema.problems(r) for path, r in found.items()} == {
        path: [] for path in found
    }
    return found


def lost_results(workdir):
    """Healthy runs without an ok record."""
    lost = 0
    for dataset, model, backend in HEALTHY:
        try:
            lost += record(workdir, dataset, model, backend)["status"] != "ok"
        except FileNotFoundError:
            lost += 1
    return lost


def tally(tried, survived, lost):
    FAULT_TALLY["tried"] += tried
    FAULT_TALLY["survived"] += survived
    FAULT_TALLY["lost"] += lost


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, built_workflow):
    healthy = ["keras-jax", "keras-torch", "native-torch"]
    for environment in healthy:
        built_workflow.venv(environment)
    workdir = copy_workflow(tmp_path_factory.mktemp("faults"), built_workflow.path, healthy)
    mirror = workdir / "mirror"
    mirror.mkdir()
    stand_ins.babi_archive(mirror / BABI_FILE, train=200, test=100)
    env_file = workdir / "envs" / "{}.yaml".format(BROKEN)
    env_file.write_text(
        env_file.read_text().replace("tensorflow-cpu==2.21.0", "tensorflow-cpu==0.0.1")
    )
    write_config(workdir / CONFIG, fault_config(mirror))
    return workdir


def test_faults_inside_runs_cost_only_those_runs(workdir):
    """A Python error, a segfault, a hang, an allocation past the memory
    limit and an environment that cannot be built, all in one invocation:
    each run gets its record with the reason; the healthy runs, the tables
    and the report are made."""
    faults = ",".join("{}/{}/{}/0={}".format(*run, kind) for run, (kind, _, _) in FAULTS.items())
    started = time.monotonic()
    snakemake(workdir, "-j2", faults=faults)
    pinned = [r["runtime"]["cpus_pinned"] for r in all_records(workdir).values() if "runtime" in r]
    assert pinned and all(len(cpus) == 1 for cpus in pinned), pinned  # the slower machine
    survived = 0
    for run, (_, status, reason) in FAULTS.items():
        found = record(workdir, *run)
        assert found["status"] == status, (run, found["error"])
        assert reason in found["error"], (run, found["error"])
        survived += 1
    for model in ("mlp", "cnn"):
        found = record(workdir, "digits", model, BROKEN)
        assert found["status"] == "unavailable"
        assert "tensorflow-cpu==0.0.1" in found["error"]
    survived += 1
    label = variants.label(MISSING_VERSION)
    found = json.loads(
        (workdir / run_json("digits", "mlp", "keras-torch", versions=label)).read_text()
    )
    assert found["status"] == "unavailable" and "keras==0.0.0.1" in found["error"]
    assert found["environment_name"] == "keras-torch@" + label
    survived += 1
    assert lost_results(workdir) == 0
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["model", "backend"])
    assert summary.loc[("mlp", "keras-jax"), "status"] == "failed"
    assert summary.loc[("lenet", "keras-jax"), "status"] == "timeout"
    assert summary.loc[("cnn", BROKEN), "status"] == "unavailable"
    table = (workdir / "results/tables/digits_mlp.md").read_text()
    assert "failed: RuntimeError: injected framework error" in table
    assert "out of memory" in table
    snakemake(workdir, "--report", "results/report.html")
    assert (workdir / "results/report.html").stat().st_size > 100_000
    tally(tried=len(FAULTS) + 2, survived=survived, lost=lost_results(workdir))
    print("faults inside runs: {:.0f} s".format(time.monotonic() - started))


def flip_a_byte_keeping_size_and_time(path):
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_corrupted_download_and_prepared_data_are_made_again(workdir):
    """A truncated download and a prepared file with a flipped bit (size and
    time kept) are discarded before any job and made again, verified, for
    what needs them: the bAbI runs, made again (the one that crashed is
    healthy this time); no run on other data is touched."""
    raw = workdir / "resources" / "babi" / BABI_FILE
    raw.write_bytes(raw.read_bytes()[: raw.stat().st_size // 2])  # a truncated download
    prepared = workdir / "results" / "data" / "babi.npz"
    flip_a_byte_keeping_size_and_time(prepared)
    babi = {Path(run_json("babi", "babi_rnn", b)) for b in ("native-torch", "keras-torch")}
    for path in babi:  # to be made again: a missing record is, a missing input is not
        (workdir / path).unlink()
    before = all_records(workdir)
    # no fault injected this time; what needs the data, not the tables
    done = snakemake(workdir, "-j2", targets=sorted(str(path) for path in babi))
    assert "discarded, will be made again: resources/babi/{}".format(BABI_FILE) in done.stderr
    assert "discarded, will be made again: results/data/babi.npz has SHA-256" in done.stderr
    assert integrity.check(raw) is None and integrity.check(prepared) is None  # sealed anew
    # bAbI has no published checksum: the new copy matched the one recorded first
    assert (workdir / "resources/checksums/babi/{}.sha256".format(BABI_FILE)).exists()
    after = all_records(workdir)
    made_again = {path for path in after if after[path] != before.get(path)}
    assert made_again == babi
    assert {after[path]["status"] for path in babi} == {"ok"}
    tally(tried=2, survived=2, lost=lost_results(workdir))


def test_killed_snakemake_resumes_with_only_the_missing_runs_and_holds_its_lock(workdir):
    """Killed mid-run, Snakemake leaves every record whole and plans only
    the run it lost; while the resumed invocation runs, a second one on the
    same folder is refused by its lock, and the first goes on to the end."""
    killed = run_json("digits", "cnn", "keras-torch")
    (workdir / killed).unlink()
    before = set(all_records(workdir))
    workflow = start_snakemake(workdir, killed, stderr=subprocess.DEVNULL, start_new_session=True)
    log = (workdir / killed).with_name("bench.log")
    deadline = time.monotonic() + 600  # a run starts within a minute on the slowest machine
    while not (log.exists() and "parameters" in log.read_text()):
        assert time.monotonic() < deadline and workflow.poll() is None
        time.sleep(0.5)
    os.killpg(workflow.pid, signal.SIGKILL)  # mid-run, no chance to clean up
    workflow.wait()
    time.sleep(2)  # the run's own process dies with its supervisor
    after = all_records(workdir)  # every record parses
    assert set(after) <= before | {Path(killed)}
    snakemake(workdir, "--unlock")
    planned = snakemake(workdir, "-n")
    bench = [
        line
        for line in (planned.stdout + planned.stderr).splitlines()
        if "output: results/runs/" in line
    ]
    assert [line.split("output:")[1].split(",")[0].strip() for line in bench] == [killed]

    resumed = start_snakemake(workdir, killed, stderr=subprocess.PIPE, text=True)
    locks = workdir / ".snakemake" / "locks"
    deadline = time.monotonic() + 300  # Snakemake locks within seconds of its start
    while not (locks.exists() and any(locks.iterdir())):
        assert time.monotonic() < deadline and resumed.poll() is None
        time.sleep(0.2)
    # Frozen, the resumed invocation keeps its lock however long the second takes
    # to start (its run goes on); otherwise it may end first on a slow machine.
    os.kill(resumed.pid, signal.SIGSTOP)
    try:
        second = snakemake(workdir, "-j1", check=False)
    finally:
        os.kill(resumed.pid, signal.SIGCONT)
    assert second.returncode != 0
    assert "cannot be locked" in second.stderr or "LockException" in second.stderr
    assert resumed.wait(timeout=INVOCATION_TIMEOUT_S) == 0, resumed.stderr.read()[-3000:]
    assert set(all_records(workdir)) == before | {Path(killed)}
    assert lost_results(workdir) == 0
    tally(tried=2, survived=2, lost=lost_results(workdir))  # the kill and the second invocation


# One of each kind of refusal (the schema's, a name, the matrix's checks);
# tests/unit/test_config_fuzz.py tries many more without Snakemake.
BAD_CONFIGS = [
    ("repeats", "three", "repeats"),
    ("backends", {"keras-caffe": None}, "keras-caffe"),
    ("dataset", "../../etc/passwd", "dataset"),
    ("devices", [0, 3], "devices[1]"),
]


@pytest.mark.parametrize(
    "key, value, named", BAD_CONFIGS, ids=[c[0] + "=" + repr(c[1]) for c in BAD_CONFIGS]
)
def test_bad_config_is_refused_naming_the_key(workdir, key, value, named):
    config = yaml.safe_load((workdir / CONFIG).read_text())
    if key == "dataset":
        config["workloads"][0]["dataset"] = value
    else:
        config[key] = value
    write_config(workdir / "config/bad.yaml", config)
    done = run_snakemake(workdir, "--configfile", "config/bad.yaml", "-j1", check=False)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert named in output, output[-2000:]
    assert "rule bench" not in output and "Traceback" not in output, output[-3000:]
    tally(tried=1, survived=1, lost=lost_results(workdir))
