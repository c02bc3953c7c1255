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
import signal
import subprocess
import sys
import threading

from dlbench import gpus, harness, launch, runtime

ERROR_TAIL_LINES = 30


def _relay(stream, tail):
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


def _failed_without_child(spec, record_path, reason):
    record = harness.base_record(spec)
    record.update(status="failed", error=reason, finished=runtime.utc_now())
    runtime.write_json_atomic(record_path, record)
    print("run not started: {}".format(reason))
    return 0


def supervise(
    spec, data, record_path, epochs_path, timeout_s=None, gpu_lock_dir=None, gpu_wait_s=None
):
    if os.path.exists(record_path):
        os.remove(record_path)  # never mistake an old record for this run's
    parallel = launch.parallel_of(spec)
    allocation = None
    if parallel["devices"] and parallel["accelerator"] == "gpu":
        try:
            allocation = gpus.assign(parallel["devices"], gpu_lock_dir, gpu_wait_s)
        except gpus.GPUsUnavailable as error:
            return _failed_without_child(spec, record_path, "GPUs unavailable: {}".format(error))
        parallel = dict(parallel, gpu_ids=allocation.ids, gpus_assigned_by=allocation.assigned_by)
        print("GPUs {} ({})".format(",".join(allocation.ids), allocation.assigned_by), flush=True)
    spec = dict(spec, parallel=parallel)
    try:
        return _run_child(spec, parallel, allocation, data, record_path, epochs_path, timeout_s)
    finally:
        if allocation is not None:
            allocation.release()


def _run_child(spec, parallel, allocation, data, record_path, epochs_path, timeout_s):
    threads = launch.threads_per_process(runtime.resolve_threads(spec.get("threads")), parallel)
    env = dict(os.environ)
    env.update(runtime.thread_environment(threads))
    env.update(runtime.environment_additions(sys.prefix, env))
    env.update(launch.environment(parallel, allocation.ids if allocation else None))
    env["PYTHONUNBUFFERED"] = "1"
    command = launch.command(
        sys.executable,
        parallel,
        [
            "--spec",
            json.dumps(spec),
            "--data",
            data,
            "--record",
            record_path,
            "--epochs",
            epochs_path,
        ],
    )
    tail = collections.deque(maxlen=ERROR_TAIL_LINES)
    child = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    relay = threading.Thread(target=_relay, args=(child.stdout, tail), daemon=True)
    relay.start()
    status = None
    try:
        child.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        status = "timeout"
    relay.join(timeout=10)

    if status is None and os.path.exists(record_path):
        return 0  # the harness wrote its own record, ok or failed
    record = harness.base_record(spec)
    record["finished"] = runtime.utc_now()
    if status == "timeout":
        record["status"] = "timeout"
        record["error"] = "no result after {:.0f} s (timeout_minutes)".format(timeout_s)
    else:
        record["status"] = "failed"
        record["error"] = "{}\n{}".format(_describe_exit(child.returncode), "".join(tail))
    record["returncode"] = child.returncode
    runtime.write_json_atomic(record_path, record)
    print("run ended without a result: {}".format(record["error"].splitlines()[0]))
    return 0


def main(argv=None):
    parser = harness.argument_parser(__doc__.splitlines()[0])
    parser.add_argument("--timeout-minutes", type=float, default=None)
    parser.add_argument("--gpu-lock-dir", default=None, help="folder of the per-GPU locks")
    parser.add_argument("--gpu-wait-minutes", type=float, default=None)
    args = parser.parse_args(argv)
    timeout_s = args.timeout_minutes * 60 if args.timeout_minutes else None
    gpu_wait_s = args.gpu_wait_minutes * 60 if args.gpu_wait_minutes is not None else None
    return supervise(
        json.loads(args.spec),
        args.data,
        args.record,
        args.epochs,
        timeout_s,
        gpu_lock_dir=args.gpu_lock_dir,
        gpu_wait_s=gpu_wait_s,
    )


if __name__ == "__main__":
    sys.exit(main())
