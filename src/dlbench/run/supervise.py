"""Run the harness in a child process and guarantee a run record.

A framework can do worse than raise: segfault, be killed for memory, hang.
The supervisor starts the harness with the threads pinned in its environment,
relays its output to the log, enforces the time-out, and writes a ``failed``
or ``timeout`` record when the child left none. It always exits 0 once a
record exists, so one bad cell never stops the rest of the matrix.
Importable on Python 3.6.
"""

import collections
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from dlbench import catalog
from dlbench.host import cpu_isa, gpus, runtime
from dlbench.record import environment_records
from dlbench.record.fields import Status
from dlbench.record.run_spec import RunSpec
from dlbench.run import (
    failures,
    harness,
    launch,
    model_check,
    op_profiling,
    run_data,
    stack_sampling,
)
from dlbench.run.training import EpochLog

ERROR_TAIL_LINES = 30
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _relay(stream, tail):
    with stream:  # closed by its reader at the end, not left to the garbage collector
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace")
            sys.stdout.write(line)
            sys.stdout.flush()
            tail.append(line)


def _describe_exit(returncode):
    if returncode < 0:
        name = signal.Signals(-returncode).name
        reason = "killed by {}".format(name)
        if name == "SIGKILL":
            reason += " (often the out-of-memory killer)"
        return reason
    return "exited with status {}".format(returncode)


def _failed_without_child(spec, record_path, epochs_path, reason, status=Status.FAILED):
    EpochLog(epochs_path).close()  # no epoch ran: the header only
    record = harness.base_record(spec)
    record.update(status=status, error=reason, reason=reason, finished=runtime.utc_now())
    runtime.write_json_atomic(record_path, record)
    print("run not started: {}".format(reason))
    return 0


def environment_check(mode, marker):
    """How the run's environment came to be and how it differs from its env
    file (the marker that dlbench.environments' venvs or checks writes: a
    built venv or a checked existing interpreter), and the reason it cannot
    run, or None."""
    check = {"mode": mode, "mismatches": None if mode == "current" else []}
    if not marker:
        return check, None
    with open(marker) as handle:
        found = json.load(handle)
    if mode == "existing":
        check["python"] = found.get("python")
    if found.get("bytecode"):  # a venv's
        check["bytecode"] = found["bytecode"]
    check["mismatches"] = found.get("mismatches", [])
    check["installed"] = environment_records.installed_distributions(found) or None
    if found.get("status", "ok") == "ok":  # the environment record's own status (venvs, checks)
        return check, None
    reason = "environment {} unavailable: {}".format(found.get("backend"), found.get("reason"))
    return check, reason


def threads_not_available(spec):
    """Why the run cannot have the threads its cell names: more than the CPUs
    this process may use (a cluster job's allocation, a container's share).
    The cell would be labelled with threads it never had."""
    threads = spec.threads
    cpus = len(runtime.available_cpus())
    if threads in (None, "all") or int(threads) <= cpus:
        return None
    return (
        "threads={}: this run may use {} CPUs; its cell would be labelled with threads it "
        "never had".format(threads, cpus)
    )


def cpu_not_applicable(spec, parallel):
    """Why this machine's CPU cannot run the run's precision, where the CPU
    computes it: the matrix planned the cell on a CPU that could (a cluster's
    login node), or under another oneDNN cap."""
    if parallel["accelerator"] == "gpu" and parallel["devices"]:
        return None
    backend = catalog.BACKENDS.get(spec.backend)  # a test's own backend is not the catalog's
    if backend is None:
        return None
    return backend.precision_cpu_not_applicable(spec.precision)


def _child_setup(limit_mb, note=None):
    """Run in the child before it starts: it dies with the supervisor (a
    killed workflow leaves no run behind to write a record later), and its
    address space is capped at ``limit_mb``, past which allocations fail in
    the child (MemoryError, bad_alloc) as on a machine with that memory. Its
    session (a process group to kill as one) takes the supervisor's priority,
    its session's or its own nice value, whichever is lower: a new session
    otherwise competes for the CPU at nice 0 beside every other session, as
    if `nice snakemake` had never been typed. ``note``: the file in which
    the child notes the nice value asked, the one applied and why not
    (runtime.note_priority), for its record."""
    nice = runtime.inherited_nice()

    def apply():
        not_applied = runtime.set_autogroup_nice(nice)
        if note:
            runtime.note_priority(note, nice, not_applied)
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except OSError:
            pass  # not Linux: the time-out still ends a lost run
        if limit_mb:
            limit = int(limit_mb * 2**20)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def supervise(
    spec,
    data,
    record_path,
    epochs_path,
    timeout_s=None,
    gpu_lock_dir=None,
    gpu_wait_s=None,
    python=None,
    env_marker=None,
    memory_limit_mb=None,
    env_mode="current",
    model_check_path=None,
    stacks=None,
    ops_path=None,
):
    """Run ``spec`` (a RunSpec) with the harness under ``python`` (the
    backend's environment; this one by default) and leave a record in every case.
    ``stacks``: (py-spy, stacks.txt, sampling.json): the run under py-spy,
    which samples its python stacks (dlbench.run.stack_sampling), and what it
    took or why it took nothing.
    ``ops_path``: where the harness writes the run's op profile (ops.json,
    dlbench.run.op_profiling); ``main`` writes why there is none where the
    run left none."""
    for old in (record_path, ops_path):
        if old and os.path.exists(old):
            os.remove(old)  # never mistake an old record or op profile for this run's
    check, unavailable = environment_check(env_mode, env_marker)
    spec = spec._replace(environment_check=check)
    no_data = run_data.unavailable_reason(data)
    if no_data:  # a download that failed or files refused: no run starts, the reason kept
        if run_data.is_refused(data):
            reason = catalog.REFUSED_DATA_REASON.format(spec.dataset) + no_data
            status = Status.INVALID
        else:
            reason = catalog.NO_DATA_REASON.format(spec.dataset) + no_data
            status = Status.UNAVAILABLE
        return _failed_without_child(spec, record_path, epochs_path, reason, status=status)
    invalid = model_check.verdict(model_check_path) if model_check_path else None
    if invalid:  # a model of the user's that failed its check: no run of it starts
        return _failed_without_child(spec, record_path, epochs_path, invalid, status=Status.INVALID)
    if unavailable:
        return _failed_without_child(
            spec, record_path, epochs_path, unavailable, status=Status.UNAVAILABLE
        )
    parallel = launch.parallel_of(spec)
    cpu_reason = threads_not_available(spec) or cpu_not_applicable(spec, parallel)
    if cpu_reason:
        return _failed_without_child(
            spec, record_path, epochs_path, cpu_reason, status=Status.UNAVAILABLE
        )
    allocation = None
    if parallel["devices"] and parallel["accelerator"] == "gpu":
        try:
            allocation = gpus.assign(parallel["devices"], gpu_lock_dir, gpu_wait_s)
        except gpus.GPUsUnavailable as error:
            reason = "GPUs unavailable: {}".format(error)
            return _failed_without_child(spec, record_path, epochs_path, reason)
        parallel = dict(parallel, gpu_ids=allocation.ids, gpus_assigned_by=allocation.assigned_by)
        print("GPUs {} ({})".format(",".join(allocation.ids), allocation.assigned_by), flush=True)
    spec = spec._replace(parallel=parallel)
    python = python or sys.executable
    threads = launch.threads_per_process(runtime.resolve_threads(spec.threads), parallel)
    env = dict(os.environ)
    env.update(runtime.thread_environment(threads))
    env.update(cpu_isa.cap_environment(env))
    env.update(runtime.environment_additions(runtime.prefix_of(python), env))
    env.update(launch.environment(parallel, allocation.ids if allocation else None))
    env["PYTHONUNBUFFERED"] = "1"
    harness_args = ["--spec", json.dumps(spec.as_json()), "--data", data, "--record", record_path]
    harness_args += ["--epochs", epochs_path]
    if ops_path:
        harness_args += ["--ops", ops_path]
    torchrun_logs = None
    if parallel["launch"] == "process_per_device":
        torchrun_logs = tempfile.mkdtemp(prefix="dlbench-torchrun-")
    command = launch.command(python, parallel, harness_args, log_dir=torchrun_logs)
    if stacks is not None:
        framework = catalog.BACKENDS[spec.backend]["framework"]
        command = _sampled(command, parallel, *stacks, framework=framework)
    env[runtime.PRIORITY_NOTE_VARIABLE] = _priority_note()
    try:
        return _run_child(spec, command, env, record_path, timeout_s, memory_limit_mb)
    finally:
        if os.path.exists(env[runtime.PRIORITY_NOTE_VARIABLE]):
            os.remove(env[runtime.PRIORITY_NOTE_VARIABLE])
        if torchrun_logs is not None:
            shutil.rmtree(torchrun_logs, ignore_errors=True)
        if allocation is not None:
            allocation.release()
        if not os.path.exists(epochs_path):  # the child died before it began one
            EpochLog(epochs_path).close()


def _priority_note():
    """An empty file in which the run's process notes its priority
    (_child_setup); removed once the run ended."""
    handle, path = tempfile.mkstemp(prefix="dlbench-priority-", suffix=".json")
    os.close(handle)
    return path


def _sampled(command, parallel, sampler, stacks_path, sampling_path, framework=None):
    """The harness' command under py-spy where it can sample it; otherwise
    the command as it was and sampling.json saying why not (the run still
    gives its record). sampling.json is completed after the run (main)."""
    open(stacks_path, "w").close()  # stays empty where nothing is sampled
    reason = stack_sampling.not_sampled(parallel) or (
        None if sampler and os.path.exists(sampler) else "no {} here".format(stack_sampling.SAMPLER)
    )
    reason = reason or stack_sampling.can_sample(sampler)
    runtime.write_json_atomic(sampling_path, {"reason": reason})
    if reason:
        print("no python stacks: " + reason, flush=True)
        return command
    return stack_sampling.command(sampler, stacks_path, command, framework)


def _run_child(spec, command, env, record_path, timeout_s, memory_limit_mb):
    tail = collections.deque(maxlen=ERROR_TAIL_LINES)
    env = dict(env, **{harness.LAUNCHED_VARIABLE: repr(time.time())})
    child = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_child_setup(memory_limit_mb, env.get(runtime.PRIORITY_NOTE_VARIABLE)),
    )
    relay = threading.Thread(target=_relay, args=(child.stdout, tail), daemon=True)
    relay.start()
    status = None
    try:
        child.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        status = Status.TIMEOUT
    relay.join(timeout=10)

    if status is None and os.path.exists(record_path):
        return 0  # the harness wrote its own record, ok or failed
    record = harness.base_record(spec)
    record["finished"] = runtime.utc_now()
    if status == Status.TIMEOUT:
        record["status"] = Status.TIMEOUT
        record["error"] = "timeout: no result after {:g} s (timeout_minutes)".format(timeout_s)
        record["reason"] = record["error"]
    else:
        record["status"] = Status.FAILED
        ended = _describe_exit(child.returncode)
        record["error"] = failures.name_memory_errors("{}\n{}".format(ended, "".join(tail)))
        record["reason"] = failures.failure_reason(record["error"], headline=ended)
    record["returncode"] = child.returncode
    runtime.write_json_atomic(record_path, record)
    print("run ended without a result: {}".format(record["error"].splitlines()[0]))
    return 0


def main(argv=None):
    parser = harness.argument_parser(__doc__.splitlines()[0])
    parser.add_argument("--timeout-minutes", type=float, default=None)
    parser.add_argument("--gpu-lock-dir", default=None, help="folder of the per-GPU locks")
    parser.add_argument("--gpu-wait-minutes", type=float, default=None)
    parser.add_argument("--python", default=None, help="the backend environment's interpreter")
    parser.add_argument(
        "--env-marker", default=None, help="the built venv's or checked interpreter's marker"
    )
    parser.add_argument(
        "--env-mode", default="current", choices=["conda", "venv", "existing", "current"]
    )
    parser.add_argument("--memory-limit-mb", type=float, default=None)
    parser.add_argument("--model-check", default=None, help="a model of the user's: its check")
    parser.add_argument("--sampler", default=None, help="py-spy, to sample the run's stacks with")
    parser.add_argument("--stacks", default=None, help="where the sampled stacks go")
    parser.add_argument("--sampling", default=None, help="where sampling.json goes")
    args = parser.parse_args(argv)
    spec = RunSpec.from_json(json.loads(args.spec))
    stacks = (args.sampler, args.stacks, args.sampling) if args.sampling else None
    timeout_s = args.timeout_minutes * 60 if args.timeout_minutes else None
    gpu_wait_s = args.gpu_wait_minutes * 60 if args.gpu_wait_minutes is not None else None
    status = supervise(
        spec,
        args.data,
        args.record,
        args.epochs,
        timeout_s,
        gpu_lock_dir=args.gpu_lock_dir,
        gpu_wait_s=gpu_wait_s,
        python=args.python,
        env_marker=args.env_marker,
        memory_limit_mb=args.memory_limit_mb,
        env_mode=args.env_mode,
        model_check_path=args.model_check,
        stacks=stacks,
        ops_path=args.ops,
    )
    if args.ops and not os.path.exists(args.ops):
        runtime.write_json_atomic(args.ops, op_profiling.not_profiled(_no_ops(args.record)))
    if stacks is not None:
        backend = catalog.BACKENDS.get(spec.backend) or {}
        _describe_sampling(*stacks, framework=backend.get("framework"))
    return status


def _no_ops(record_path):
    """Why a run left no op profile: it did not end ok."""
    try:
        with open(record_path) as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return "the run left no record"
    return "the run {}: {}".format(record.get("status"), record.get("reason"))


def _describe_sampling(sampler, stacks_path, sampling_path, framework=None):
    """sampling.json once the run ended: the sampler and what it took, or
    why there are no python stacks (set before the run, or none sampled)."""
    if not os.path.exists(stacks_path):
        open(stacks_path, "w").close()
    reason = None
    if os.path.exists(sampling_path):
        with open(sampling_path) as handle:
            reason = json.load(handle).get("reason")
    else:
        reason = "the run did not start (its record says why)"
    described = stack_sampling.description(sampler, stacks_path, reason, framework)
    runtime.write_json_atomic(sampling_path, described)


if __name__ == "__main__":
    sys.exit(main())
