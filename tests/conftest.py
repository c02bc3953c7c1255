import collections
import copy
import fcntl
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

import system_requirements
from dlbench import backends, catalog, matrix, runtime

REPO = Path(__file__).resolve().parents[1]
# keras-torch's env asks PyTorch's CPU wheel index for every package; where
# that index is out of reach, pip's five retries per package cost minutes.
os.environ.setdefault("PIP_RETRIES", "1")
# The benchmark scripts come with the workflow: run in a built copy, they
# find its venvs and results as they find the repository's.
WORKFLOW_PARTS = ("Snakefile", "workflow", "envs", "config", "profiles", "src", "benchmarks")
WORKFLOW_PARTS += ("examples",)
WORKFLOW_PARTS += ("tests/report_browser.py",)
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))

# Time-outs of whole Snakemake invocations in the tests. No healthy
# invocation comes near them: each is at least three times what the slowest
# machine of this kind (a 2-core AMD EPYC, 1.6x slower than the Xeons in the
# whole smoke) needed, and they exist only so that a hung invocation fails
# its test with its output instead of stalling CI. The smoke from nothing
# (14 venvs, every run) took 24 minutes there; a small config's invocation (a
# handful of runs, a venv or two) well under 5 minutes.
SMOKE_TIMEOUT_S = 3 * 3600
SETUP_TIMEOUT_S = 3600
INVOCATION_TIMEOUT_S = 3600
# One run started by a test outside Snakemake (seconds to a minute there).
RUN_TIMEOUT_S = 600
# The priority of the tests' processes beside the background smoke run.
TESTS_NICENESS = 10
# make test runs the tests in two processes (pytest-xdist); this one's name
# there (gw0, gw1), None where pytest runs them all itself.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")


@pytest.fixture(autouse=True)
def restore_cpu_affinity():
    """harness.run pins the calling process; keep the test process unpinned."""
    cpus = os.sched_getaffinity(0)
    yield
    os.sched_setaffinity(0, cpus)


@pytest.fixture
def smoke_config():
    with open(REPO / "config" / "smoke.yaml") as handle:
        return yaml.safe_load(handle)


@pytest.fixture
def full_config():
    with open(REPO / "config" / "config.yaml") as handle:
        return yaml.safe_load(handle)


@pytest.fixture
def numpy_backend(monkeypatch):
    """Registers 'numpy-test', a real numpy training loop (tests/numpy_adapter.py)."""
    monkeypatch.setitem(catalog.BACKENDS, "numpy-test", {"family": "numpy", "framework": "numpy"})
    monkeypatch.setitem(backends.ADAPTERS, "numpy", "numpy_adapter")
    return "numpy-test"


@pytest.fixture(scope="session")
def digits_npz(tmp_path_factory):
    from dlbench.data import prepare

    path = tmp_path_factory.mktemp("data") / "digits.npz"
    prepare("digits", {}, path)
    return path


def copy_workflow(destination, venvs_from=None, environments=()):
    """A private copy of the workflow, so tests may edit env files and
    configs. The named ``environments`` are linked from the built workflow
    ``venvs_from`` instead of built again: Snakemake finds their venvs ready
    (and newer than the copied env files, which keep their times)."""
    destination = Path(destination)
    for part in WORKFLOW_PARTS:
        source = REPO / part
        if source.is_dir():
            shutil.copytree(
                source,
                destination / part,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        else:
            (destination / part).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / part)
    for environment in environments:
        built = Path(venvs_from) / ".venvs" / environment
        assert (built / "ready.json").exists(), "no venv built at {}".format(built)
        (destination / ".venvs").mkdir(exist_ok=True)
        (destination / ".venvs" / environment).symlink_to(built, target_is_directory=True)
    return destination


def run_snakemake(workdir, *args, check=True, timeout=INVOCATION_TIMEOUT_S, **popen):
    """Snakemake in ``workdir``; its output in the assertion when it fails."""
    done = subprocess.run(
        [SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True, timeout=timeout, **popen
    )
    if check and done.returncode != 0:
        raise AssertionError(
            "snakemake {} failed:\n{}\n{}".format(args, done.stdout[-3000:], done.stderr[-6000:])
        )
    return done


SMOKE_CONFIG = "config/smoke.yaml"

# The precision workflow, made in the background after the smoke run: the
# smoke's digits MLP in float32 and mixed_bfloat16, eager and compiled, on
# every Keras 3 backend that trains and on native TensorFlow, torch, JAX,
# MXNet and Chainer (which has no bfloat16: float32 here, float16 in
# test_precision_e2e), one repeat
# (tests/test_precision_e2e.py reads it). One thread a run: it keeps one core
# while the tests, which after the smoke run one at a time, take the other.
PRECISION_CONFIG = "config/precision.yaml"
PRECISION_BACKENDS = ("keras-tensorflow", "keras-jax", "keras-torch")
PRECISION_BACKENDS += ("native-tensorflow", "native-torch", "native-jax", "native-mxnet")
PRECISION_BACKENDS += ("native-chainer",)
PRECISION_TARGETS = (
    "results/summary.csv",
    "results/tables/speedups.md",
    "results/plots/speedups.png",
)


def precision_config(precision=("float32", "mixed_bfloat16"), compile_modes=("eager", "compiled")):
    smoke = yaml.safe_load((REPO / SMOKE_CONFIG).read_text())
    (mlp,) = [dict(w, repeats=1) for w in smoke["workloads"] if w["model"] == "mlp"]
    return dict(
        smoke,
        backends={b: smoke["backends"][b] for b in PRECISION_BACKENDS},
        workloads=[mlp],
        precision=list(precision),
        compile=list(compile_modes),
        threads=1,
        equivalence_check={"steps": 0},
        custom_models={},
    )


# Tests that open a report in Chromium; where it is missing they are skipped
# and the summary (pytest -ra) says why.
needs_browser = pytest.mark.skipif(
    system_requirements.missing("browser") is not None,
    reason=str(system_requirements.missing("browser")),
)


class BuiltWorkflow(object):
    """One copy of the workflow for the whole session, built as far as its
    tests need: the smoke config's environments and prepared data (the
    set-up), then its runs (the smoke run). The end-to-end tests read it;
    modules that need a workflow of their own link its venvs instead of
    building theirs.

    When the session has tests that read the smoke run, the set-up and then
    the smoke run are made in the background from the session's start, and
    those tests run last (``pytest_collection_modifyitems``): every other
    test runs meanwhile, on the cores the smoke run leaves idle. Otherwise
    what a test asks for is built when it asks.

    Under pytest-xdist the workers share it: the first to come builds it (the
    builder), the others wait for the outcome of each stage, which the
    builder writes beside it (``outcome_file``)."""

    def __init__(self, path, builder=True):
        self.path = path
        self.builder = builder
        self.config = yaml.safe_load((path / SMOKE_CONFIG).read_text())
        self.background = None
        self.process = None
        self.interrupted = False  # the session was interrupted: stop() kills
        self.outcomes = {}  # stage -> (exit status, seconds, CPU seconds)
        self.smoke_wanted = False  # the session has tests that read it
        self.precision_wanted = False  # the same
        self.precision_path = path.parent / "precision_workflow"

    @classmethod
    def shared(cls, root):
        """The session's built workflow in ``root``: copied by the first
        process that asks (which builds it), found by the others."""
        path = root / "built_workflow"
        with open(root / "built_workflow.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when closed
            builder = not path.exists()
            if builder:
                copy_workflow(path)
                (root / "built_workflow.builder").write_text(str(os.getpid()))
        return cls(path, builder)

    @property
    def building(self):
        """Whether the stages are made in the background (by this process or
        by another worker)."""
        return self.background is not None or not self.builder

    def setup_targets(self):
        """Every venv, prepared dataset and file of shared initial weights of
        the smoke config (the benchmark scripts run cells outside Snakemake),
        or of the precision workflow's where the session reads only that."""
        config = self.config if self.smoke_wanted else precision_config()
        environments = {catalog.environment_of(b, 0, "gpu") for b in config["backends"]}
        datasets = {entry["dataset"] for entry in config["workloads"]}
        weights = set()
        for run in matrix.runs(config):
            entry = matrix.workload(config, run.dataset, run.model)
            weights.update(matrix.initial_weights_entry(config, entry, run).values())
        return (
            [".venvs/{}/ready.json".format(e) for e in sorted(environments)]
            + ["results/data/{}.npz".format(d) for d in sorted(datasets)]
            + sorted(weights)
        )

    def start(self):
        """Set-up, then the smoke run, in the background (by the builder).
        The tests' own processes then run at a lower priority: the smoke run
        is the session's longest chain, and they fill the time its runs
        leave (the session's group is niced too: ``lower_session_priority``)."""
        if self.builder:
            self.background = threading.Thread(target=self._build_everything, daemon=True)
            self.background.start()
        os.nice(TESTS_NICENESS)  # this thread only (Linux), and what it starts

    def _build_everything(self):
        stages = ["setup", "smoke", "precision"]
        try:
            # no timed run yet: four venv builds at a time (pip waits on the network too)
            setup = self.setup_targets() + ["--resources", "cpu_exclusive=4", "-j4"]
            self._stage("setup", setup, SETUP_TIMEOUT_S)
            if self.smoke_wanted and self._succeeded("setup"):
                self._stage("smoke", ["-j2"], SMOKE_TIMEOUT_S)
            if self.precision_wanted and self._succeeded("setup"):
                self._make_precision()
        finally:
            for stage in stages:  # so that nobody waits for a stage never made
                if stage not in self.outcomes:
                    self._record(stage, "not made", 0, 0)

    def _succeeded(self, stage):
        return self.outcomes.get(stage, (None,))[0] == 0

    def _make_precision(self):
        workdir = copy_workflow(self.precision_path, self.path, PRECISION_BACKENDS)
        write_config(workdir / PRECISION_CONFIG, precision_config())
        arguments = [*PRECISION_TARGETS, "-j2"]
        self._stage("precision", arguments, SMOKE_TIMEOUT_S, workdir, PRECISION_CONFIG)

    def _stage(self, stage, arguments, timeout, workdir=None, configfile=SMOKE_CONFIG):
        started = time.monotonic()
        with open(self.log(stage), "w") as log:
            # --configfile last: it takes every name that follows it
            self.process = subprocess.Popen(
                [SNAKEMAKE, *arguments, "--configfile", configfile],
                cwd=workdir or self.path,
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
        written.write_text(json.dumps({"status": status, "seconds": seconds, "cpu": cpu}))
        written.replace(self.outcome_file(stage))

    def outcome_file(self, stage):
        return self.path.parent / "built_workflow.{}.json".format(stage)

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
        """The smoke config's ``targets`` (files), made if need be."""
        if self.building:
            self._check("setup")
        missing = [target for target in targets if not (self.path / target).exists()]
        if missing and self.building:
            raise AssertionError("not among the set-up's targets: {}".format(missing))
        if missing:
            run_snakemake(self.path, *missing, "--configfile", SMOKE_CONFIG, "-j2")
        return [self.path / target for target in targets]

    def venv(self, environment):
        """The venv of ``environment``; its folder."""
        (ready,) = self.build(".venvs/{}/ready.json".format(environment))
        built = json.loads(ready.read_text())
        assert built["status"] == "ok", built
        return ready.parent

    def smoke(self):
        """The workflow after every run of the smoke config."""
        if self.building:
            self._check("smoke")
        elif "smoke" not in self.outcomes:
            started = time.monotonic()
            run_snakemake(self.path, "--configfile", SMOKE_CONFIG, "-j2", timeout=SMOKE_TIMEOUT_S)
            self._record("smoke", 0, time.monotonic() - started, 0)
        return self.path

    def precision(self):
        """The precision workflow (``precision_config``) after its runs."""
        if self.building:
            self._check("precision")
        elif "precision" not in self.outcomes:
            for backend in PRECISION_BACKENDS:
                self.venv(backend)
            self._make_precision()
            self._check("precision")
        return self.precision_path

    def wait_while_smoke_runs(self):
        """Under pytest-xdist, the worker that does not build waits for the
        end of the smoke run before an end-to-end test: two streams of tests
        beside the smoke run's timed runs slowed them more than one did (its
        two pinned threads wait on each other whenever a core is taken:
        keras-torch's bAbI epochs 32 s instead of 5.5 with one stream, the
        smoke run 41 minutes instead of 28)."""
        if XDIST_WORKER and not self.builder and self.smoke_wanted:
            self._wait("smoke")

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


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def session_root(tmp_path_factory):
    """The session's temporary folder, the same for every xdist worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if XDIST_WORKER else base


SMOKE_NEEDED = pytest.StashKey[bool]()
PRECISION_NEEDED = pytest.StashKey[bool]()
BACKGROUND_READERS = ("smoke_workflow", "precision_workflow")


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(config, items):
    """The unit tests first (they need nothing built), then the end-to-end
    tests, then those that read the smoke run and last those that read the
    precision workflow, so that the others run while they are made."""
    readers = {
        name: [item for item in items if name in item.fixturenames] for name in BACKGROUND_READERS
    }
    others = [item for item in items if not set(BACKGROUND_READERS) & set(item.fixturenames)]
    others.sort(key=lambda item: item.get_closest_marker("e2e") is not None)  # stable
    items[:] = others + [item for name in BACKGROUND_READERS for item in readers[name]]
    config.stash[PRECISION_NEEDED] = bool(readers["precision_workflow"])
    config.stash[SMOKE_NEEDED] = bool(readers["smoke_workflow"])


SESSION_NICE = []  # the session group's nice value before it was lowered


def lower_session_priority():
    """Linux shares the CPU between sessions (autogroups) before it looks at a
    process' nice value, and the smoke run is a session of its own: niced in
    the tests' session only, the tests took half the CPU from the smoke run,
    whose two pinned threads then waited on each other (epochs of keras-torch's
    bAbI RNN 15 times slower than alone). So the tests' session group is
    niced too, where it can be restored (root)."""
    if os.geteuid() == 0 and not SESSION_NICE:
        SESSION_NICE.append(runtime.autogroup_nice())
        runtime.set_autogroup_nice(TESTS_NICENESS)


def pytest_configure(config):
    if not XDIST_WORKER and getattr(config.option, "numprocesses", None):
        lower_session_priority()  # the workers' session, from the controller


def pytest_unconfigure(config):
    if SESSION_NICE and not XDIST_WORKER:
        runtime.set_autogroup_nice(SESSION_NICE.pop())


def pytest_keyboard_interrupt(excinfo):
    for built in BUILT:
        built.interrupted = True


@pytest.fixture(scope="session", autouse=True)
def built_workflow(request, tmp_path_factory):
    built = BuiltWorkflow.shared(session_root(tmp_path_factory))
    built.smoke_wanted = request.config.stash.get(SMOKE_NEEDED, False)
    built.precision_wanted = request.config.stash.get(PRECISION_NEEDED, False)
    if built.smoke_wanted or built.precision_wanted:
        built.start()
        if not XDIST_WORKER:
            lower_session_priority()
    BUILT.append(built)
    yield built
    built.stop()
    if not XDIST_WORKER and SESSION_NICE:
        runtime.set_autogroup_nice(SESSION_NICE.pop())


BUILT = []  # this process' built workflow


def _one_stream_during_smoke(request, built_workflow):
    if request.node.get_closest_marker("e2e") is not None:
        built_workflow.wait_while_smoke_runs()


@pytest.fixture(scope="module", autouse=True)
def one_stream_during_smoke_module(request, built_workflow):
    """Before an end-to-end module's own fixtures (``wait_while_smoke_runs``)."""
    _one_stream_during_smoke(request, built_workflow)


@pytest.fixture(autouse=True)
def one_stream_during_smoke(request, built_workflow):
    """The same for end-to-end tests in modules of unit tests."""
    _one_stream_during_smoke(request, built_workflow)


@pytest.fixture(scope="session")
def smoke_workflow(built_workflow):
    """The workflow after `snakemake --configfile config/smoke.yaml -j2`."""
    return built_workflow.smoke()


@pytest.fixture(scope="session")
def precision_workflow(built_workflow):
    """A workflow of its own (``precision_config``) after its runs."""
    return built_workflow.precision()


try:
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # pytest runs every test itself
    LoadScopeScheduling = None

if LoadScopeScheduling is not None:

    class ModuleRunScheduling(LoadScopeScheduling):
        """pytest-xdist's unit of work here: a run of consecutive tests of one
        module in the order ``pytest_collection_modifyitems`` gave, handed out
        in that order to whichever worker is free. A module's fixtures are
        then made once, and the tests that wait for the smoke run still come
        last (xdist's own scopes would start with the modules of most tests)."""

        def schedule(self):
            if self.collection is None and self.collection_is_completed:
                collection = next(iter(self.registered_collections.values()))
                self.run_of = {}
                run = 0
                for previous, nodeid in zip([None, *collection], collection):
                    if previous is None or _module(previous) != _module(nodeid):
                        run += 1
                    self.run_of[nodeid] = "{}#{}".format(_module(nodeid), run)
            super().schedule()

        def _split_scope(self, nodeid):
            return self.run_of[nodeid]

    def _module(nodeid):
        return nodeid.split("::")[0]

    def pytest_xdist_make_scheduler(config, log):
        if config.getvalue("dist") == "load":  # -n's default
            config.option.loadscopereorder = False
            return ModuleRunScheduling(config, log)
        return None


# This machine's name as the workflow derives it (machine: auto).
MACHINE = matrix.machine_name({})


def run_json(dataset, model, backend, devices=0, repeat=1, machine=MACHINE, **dimensions):
    """A run record's path in a workflow folder."""
    run = matrix.Run(
        dataset, model, backend, devices=devices, repeat=repeat, machine=machine, **dimensions
    )
    return matrix.run_dir(run) + "/run.json"


# Real run records (a Keras training run, a native inference run, and the
# failed, timed-out and unavailable records of the fault suite), kept so that
# the code that reads records is tested on what the harness really writes.
FIXTURE_RECORDS = REPO / "tests" / "fixtures" / "records"


def fixture_record(name, **changes):
    """A real run record (``tests/fixtures/records/<name>.json``), changed;
    the dimensions it predates at their defaults, as collect reads it."""
    record = json.loads((FIXTURE_RECORDS / "{}.json".format(name)).read_text())
    record = dict(matrix.record_cell(record), **record)
    record.update(changes)
    return record


def write_config(path, config):
    with open(path, "w") as handle:
        yaml.safe_dump(copy.deepcopy(config), handle, sort_keys=False)
    return path


# What the fault-injection tests (test_faults.py) tried, how many of the
# faults the workflow survived (the fault's run recorded with its reason,
# everything else done) and how many results were lost; printed at the end.
FAULT_TALLY = {"tried": 0, "survived": 0, "lost": 0}


# Wall time of each test module's tests (set-up, call and tear-down; a
# wait for the built workflow counts to the test that waited) and the CPU
# time of the processes they ran (the built workflow's stages apart). The
# process that runs a test measures it and puts it on the test's report,
# which reaches the process that prints the summary (pytest-xdist's
# controller, or the same).
MODULE_SECONDS = collections.Counter()
MODULE_CPU = collections.Counter()
FAULTS_SEEN = collections.Counter()
BACKGROUND_CPU = []  # CPU seconds of each background stage, as it ends
_CPU_SEEN = [0.0]
_FAULTS_REPORTED = collections.Counter()


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    now = _children_cpu()
    report.children_cpu = now - _CPU_SEEN[0] - sum(BACKGROUND_CPU)
    BACKGROUND_CPU.clear()
    _CPU_SEEN[0] = now
    report.faults = dict(collections.Counter(FAULT_TALLY) - _FAULTS_REPORTED)
    _FAULTS_REPORTED.update(report.faults)


def pytest_runtest_logreport(report):
    module = report.nodeid.split("::")[0]
    MODULE_SECONDS[module] += report.duration
    MODULE_CPU[module] += getattr(report, "children_cpu", 0)
    FAULTS_SEEN.update(getattr(report, "faults", {}))


def pytest_terminal_summary(terminalreporter, config):
    terminalreporter.write_line(
        "machine: {}, {} cores".format(runtime.cpu_model(), len(os.sched_getaffinity(0)))
    )
    if MODULE_SECONDS:
        terminalreporter.write_line(
            "time by module (wall / CPU of its processes): "
            + ", ".join(
                "{} {:.0f} / {:.0f} s".format(Path(name).name, seconds, MODULE_CPU[name])
                for name, seconds in sorted(MODULE_SECONDS.items(), key=lambda item: -item[1])
            )
        )
    root = config._tmp_path_factory.getbasetemp()  # the workers' root under xdist
    for stage in ("setup", "smoke", "precision"):
        outcome_file = root / "built_workflow.{}.json".format(stage)
        if not outcome_file.exists():
            continue
        outcome = json.loads(outcome_file.read_text())
        if outcome["status"] == "not made":
            continue
        terminalreporter.write_line(
            "built workflow: {} {} in {:.0f} s, CPU {:.0f} s ({})".format(
                stage,
                "done" if outcome["status"] == 0 else "FAILED ({})".format(outcome["status"]),
                outcome["seconds"],
                outcome["cpu"],
                root / "built_workflow",
            )
        )
    if FAULTS_SEEN["tried"]:
        terminalreporter.write_line(
            "fault injection: {} faults tried, {} survived, {} results lost".format(
                FAULTS_SEEN["tried"], FAULTS_SEEN["survived"], FAULTS_SEEN["lost"]
            )
        )
