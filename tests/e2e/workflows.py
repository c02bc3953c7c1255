"""The end-to-end tier's workflows: private copies of the workflow, Snakemake
run in them, and the one workflow the session builds from the tests' config
(config/test.yaml) for every module to read or borrow venvs from."""

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from dlbench import catalog
from dlbench.plan import matrix, run_spec
from testkit import (
    BACKGROUND_CPU,
    REPO,
    RUN_TIMEOUT_S,
    SETUP_TIMEOUT_S,
    SNAKEMAKE,
    TESTS_NICENESS,
    WORKFLOW_TIMEOUT_S,
    XDIST_WORKER,
    copy_workflow,
    run_snakemake,
    stage_outcome_file,
)

TEST_CONFIG = "config/test.yaml"

# A folder whose .venvs/ holds built venvs (a checkout after make setup or a
# workflow): the session's workflow links those that were built ok instead
# of building them again, as copy_workflow lends a workflow's venvs.
LEND_VENVS = "DLBENCH_LEND_VENVS"
# The seeds test_time_to_accuracy_e2e.py runs of the tests' config's
# time-to-accuracy workload, whose shared weights the set-up draws.
TIME_TO_ACCURACY_SEEDS = 3


def lent_venvs(environ=os.environ):
    """copy_workflow's arguments that link the venvs LEND_VENVS lends."""
    folder = environ.get(LEND_VENVS)
    if not folder:
        return {}
    ready = []
    for marker in sorted(Path(folder, ".venvs").glob("*/ready.json")):
        if json.loads(marker.read_text()).get("status") == "ok":
            ready.append(marker.parent.name)
    return {"venvs_from": folder, "environments": ready}


def load_test_config():
    """The tests' config (config/test.yaml), as a dict."""
    return yaml.safe_load((REPO / TEST_CONFIG).read_text())


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class BuiltWorkflow(object):
    """One copy of the workflow for the whole session, built as far as its
    tests need from the tests' config: its environments, prepared data and
    shared weights (the set-up), then every target (the workflow stage).
    The tests read it; modules that need a workflow of their own link its
    venvs instead of building theirs.

    When the session has tests that read the workflow stage, the set-up and
    then that stage are made in the background from the session's start,
    and those tests run last (the root conftest's order): every other test
    runs meanwhile. The config pins each run to one thread and runs them in
    turn, so the stage keeps one core and the tests take the other.
    Otherwise what a test asks for is built when it asks.

    Under pytest-xdist the workers share it: the first to come builds it (the
    builder), the others wait for the outcome of each stage, which the
    builder writes beside it (``outcome_file``). Without tests that read the
    workflow stage nothing is built in the background: each worker builds
    what its tests ask for, one worker at a time."""

    STAGES = ("setup", "workflow")

    def __init__(self, path, builder=True):
        self.path = path
        self.builder = builder
        self.config = yaml.safe_load((path / TEST_CONFIG).read_text())
        self.background = None
        self.process = None
        self.interrupted = False  # the session was interrupted: stop() kills
        self.outcomes = {}  # stage -> (exit status, seconds, CPU seconds)
        self.workflow_wanted = False  # the session has tests that read it

    @classmethod
    def shared(cls, root):
        """The session's built workflow in ``root``: copied by the first
        process that asks (which builds it), found by the others."""
        path = root / "built_workflow"
        with open(root / "built_workflow.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
            builder = not path.exists()
            if builder:
                copy_workflow(path, **lent_venvs())
                (root / "built_workflow.builder").write_text(str(os.getpid()))
        return cls(path, builder)

    @property
    def building(self):
        """Whether the stages are made in the background (by this process or
        by another worker: the builder does where the session has tests that
        read the workflow stage, which every worker collects alike)."""
        return self.background is not None or (not self.builder and self.workflow_wanted)

    def setup_targets(self):
        """Every venv, prepared dataset and file of shared initial weights of
        the tests' config (tests run cells outside Snakemake too)."""
        config = self.config
        environments = {catalog.BACKENDS[b].environment(0, "gpu") for b in config["backends"]}
        datasets = {entry["dataset"] for entry in config["workloads"]}
        weights = set()
        for run in matrix.runs(config):
            entry = matrix.workload(config, run.dataset, run.model)
            weights.update(run_spec.initial_weights_entry(config, entry, run).values())
            # test_time_to_accuracy_e2e.py runs more seeds than the config's repeats
            for repeat in range(2, TIME_TO_ACCURACY_SEEDS + 1):
                if entry.get("time_to_accuracy"):
                    later = run._replace(repeat=repeat)
                    weights.update(run_spec.initial_weights_entry(config, entry, later).values())
        return (
            [".venvs/{}/ready.json".format(e) for e in sorted(environments)]
            + ["results/data/{}.npz".format(d) for d in sorted(datasets)]
            + sorted(weights)
        )

    def start(self):
        """Set-up, then the workflow stage, in the background (by the
        builder). The tests' own processes then run at a lower priority."""
        if self.builder:
            self.background = threading.Thread(target=self._build_everything, daemon=True)
            self.background.start()
        os.nice(TESTS_NICENESS)  # this thread only (Linux), and what it starts

    def _build_everything(self):
        try:
            # no timed run yet: four venv builds at a time (pip waits on the network too)
            setup = self.setup_targets() + ["--resources", "cpu_exclusive=4", "-j4"]
            self._stage("setup", setup, SETUP_TIMEOUT_S)
            if self.workflow_wanted and self._succeeded("setup"):
                self._stage("workflow", ["-j2"], WORKFLOW_TIMEOUT_S)
        finally:
            for stage in self.STAGES:  # so that nobody waits for a stage never made
                if stage not in self.outcomes:
                    self._record(stage, "not made", 0, 0)

    def _succeeded(self, stage):
        return self.outcomes.get(stage, (None,))[0] == 0

    def _stage(self, stage, arguments, timeout):
        started = time.monotonic()
        with open(self.log(stage), "w") as log:
            # --configfile last: it takes every name that follows it
            self.process = subprocess.Popen(
                [SNAKEMAKE, *arguments, "--configfile", TEST_CONFIG],
                cwd=self.path,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            watchdog = threading.Timer(timeout, self._kill)
            watchdog.start()
            # wait4: the CPU time of Snakemake and everything it ran
            _, status, usage = os.wait4(self.process.pid, 0)
            watchdog.cancel()
        self.process.returncode = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        BACKGROUND_CPU.append(cpu)
        if os.WIFSIGNALED(status):
            status = "killed by signal {} (time-out {} s?)".format(os.WTERMSIG(status), timeout)
        else:
            status = self.process.returncode
        self._record(stage, status, time.monotonic() - started, cpu)

    def _record(self, stage, status, seconds, cpu):
        self.outcomes[stage] = (status, seconds, cpu)
        written = self.outcome_file(stage).with_suffix(".partial")
        outcome = {"status": status, "seconds": seconds, "cpu": cpu, "ended": time.time()}
        written.write_text(json.dumps(outcome))
        written.replace(self.outcome_file(stage))

    def outcome_file(self, stage):
        return stage_outcome_file(self.path.parent, stage)

    def _kill(self):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it has ended

    def log(self, stage):
        return self.path.parent / "{}.log".format(stage)

    def _wait(self, stage):
        """The stage's outcome, once it is made; a worker that is not the
        builder gives up when the builder's process has gone."""
        builder_pid = int((self.path.parent / "built_workflow.builder").read_text())
        while not self.outcome_file(stage).exists():
            if not self.builder and not _process_alive(builder_pid):
                return ("not made: the worker building it ({}) has ended".format(builder_pid), 0, 0)
            time.sleep(1)
        outcome = json.loads(self.outcome_file(stage).read_text())
        return outcome["status"], outcome["seconds"], outcome["cpu"]

    def _check(self, stage):
        status, seconds, _ = self._wait(stage)
        if status != 0:
            raise AssertionError(
                "the built workflow's {} failed ({}) after {:.0f} s:\n{}".format(
                    stage, status, seconds, self.log(stage).read_text()[-6000:]
                )
            )

    def build(self, *targets):
        """The tests' config's ``targets`` (files), made if need be."""
        if self.building:
            self._check("setup")
        missing = [target for target in targets if not (self.path / target).exists()]
        if missing and self.building:
            raise AssertionError("not among the set-up's targets: {}".format(missing))
        if missing:
            # one worker at a time: Snakemake locks the folder against a second
            with open(self.path.parent / "built_workflow.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                missing = [target for target in missing if not (self.path / target).exists()]
                if missing:
                    run_snakemake(self.path, *missing, "--configfile", TEST_CONFIG, "-j2")
        return [self.path / target for target in targets]

    def venv(self, environment):
        """The venv of ``environment``; its folder."""
        (ready,) = self.build(".venvs/{}/ready.json".format(environment))
        built = json.loads(ready.read_text())
        assert built["status"] == "ok", built
        return ready.parent

    def workflow(self):
        """The workflow after every target of the tests' config."""
        if self.building:
            self._check("workflow")
        elif "workflow" not in self.outcomes:
            started = time.monotonic()
            run_snakemake(self.path, "--configfile", TEST_CONFIG, "-j2", timeout=WORKFLOW_TIMEOUT_S)
            self._record("workflow", 0, time.monotonic() - started, 0)
        return self.path

    def stop(self):
        """Ends a background Snakemake still running where the session was
        interrupted or is the only one; under pytest-xdist the builder waits
        for the stages the other worker may still read."""
        if self.background is None:
            return
        if XDIST_WORKER and not self.interrupted:
            self.background.join()
        elif self.process is not None and self.process.returncode is None:
            self._kill()
            self.background.join()


def supervised_run(built, spec, folder, data="results/data/digits.npz", env=None, extra=()):
    """One run of ``spec`` through the supervisor, in the built workflow's
    venv of its environment, outside Snakemake (as the bench rule starts
    it); its record."""
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "run.json"
    venv = built.venv(spec["environment"])
    # the bench rule's inputs, made as Snakemake makes them (a module may run alone)
    inputs = [spec["initial_weights"]] if spec.get("initial_weights") else []
    built.build(*inputs, *([] if Path(data).is_absolute() else [str(data)]))
    done = subprocess.run(
        [sys.executable, "-m", "dlbench.run.supervise", "--python", str(venv / "bin/python")]
        + ["--spec", json.dumps(spec), "--data", str(data)]
        + ["--record", str(record), "--epochs", str(folder / "epochs.csv"), *extra],
        cwd=built.path,
        env=dict(os.environ, PYTHONPATH="src", **(env or {})),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(record.read_text())


def script_in(built, environment, script, args):
    """A tests' script run by ``environment``'s venv of the built workflow as
    the supervisor starts a run (the environment's additions, the workflow's
    library): the JSON it printed last, once it exited 0."""
    from dlbench.host import runtime

    venv = built.venv(environment)
    env = dict(os.environ, **runtime.environment_additions(str(venv), os.environ))
    env["PYTHONPATH"] = str(built.path / "src")
    done = subprocess.run(
        [str(venv / "bin" / "python"), str(script)] + list(args),
        cwd=built.path / "src",
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def harness_with(built, environment, spec, data, record, steps, first="", ops=None):
    """One run of ``spec`` by the harness in ``environment``'s venv of the
    built workflow, with the Python ``first`` run in its process before it
    (a mistake put into a framework, for the equivalence check's tests); its
    record, which must conform and have loaded the shared weights. ``ops``:
    where its op profile goes, where the spec asks for one."""
    from dlbench.host import runtime
    from dlbench.record import record_schema

    venv = built.venv(environment)
    program = first + (
        "import sys\nfrom dlbench.run import harness\nsys.exit(harness.main(sys.argv[1:]))\n"
    )
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", program]
        + ["--spec", json.dumps(spec), "--data", str(data)]
        + ["--record", str(record), "--epochs", str(steps)]
        + (["--ops", str(ops)] if ops else []),
        cwd=built.path / "src",
        env=dict(os.environ, **runtime.environment_additions(str(venv), os.environ)),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    found = json.loads(Path(record).read_text())
    assert done.returncode == 0, (found.get("error"), done.stderr[-3000:])
    assert record_schema.problems(found) == []
    assert found["initial_weights"]["loaded"], found["initial_weights"]
    return found


def small_dataset(built, folder, dataset="digits", train=256, test=128):
    """The built workflow's prepared ``dataset`` cut to its first ``train``
    and ``test`` samples: the same format, a few steps an epoch, for runs
    that check what a mode computes, not how well it learns."""
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    (source,) = built.build("results/data/{}.npz".format(dataset))
    with np.load(source, allow_pickle=False) as arrays:
        cut = {
            name: arrays[name][: train if "train" in name else test]
            if name != "meta"
            else arrays[name]
            for name in arrays.files
        }
    path = folder / "{}_small.npz".format(dataset)
    np.savez(path, **cut)
    return path
