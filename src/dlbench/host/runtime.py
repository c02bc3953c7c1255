"""Process-level measurement plumbing: thread pinning, what a run finds in
effect (``observed``: the record's ``runtime``), atomic writes. Runs inside
every backend environment, so it imports no framework and stays importable
on Python 3.6.
"""

import datetime
import json
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
from typing import IO, Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from dlbench.host import cpu_isa

# Variables that size the thread pools of BLAS libraries and of TensorFlow.
# They must be in the environment before the libraries load, so the
# supervisor sets them for the child process (see ``thread_environment``).
BLAS_THREAD_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
)


def available_cpus() -> List[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def resolve_threads(threads: Union[int, str, None]) -> int:
    """``"all"`` means every CPU this process may run on."""
    cpus = available_cpus()
    if threads in (None, "all"):
        return len(cpus)
    return max(1, min(int(threads), len(cpus)))


def thread_environment(threads: int) -> Dict[str, str]:
    env = {name: str(threads) for name in BLAS_THREAD_VARS}
    # One inter-op thread: the intra-op pool gets every core and independent
    # ops do not compete with it (the usual guidance for a single socket).
    env["TF_NUM_INTEROP_THREADS"] = "1"
    return env


# The lock files of the CPUs this process claimed, open until it exits.
_CLAIMED: List[IO[str]] = []


def claim_cpus(
    count: int, cpus: Sequence[int], lock_dir: Optional[str] = None
) -> Tuple[List[int], str]:
    """``count`` of ``cpus`` that no other run on this machine holds: one lock
    file per CPU, held until ``release_cpus`` or the process' end (as
    ``dlbench.host.gpus`` does for GPUs). Runs of fewer threads than CPUs that
    overlap (equivalence checks two at a time, ``concurrent_cpu_runs``) then
    pin to different CPUs instead of all to the first. Where fewer are free, the first ``count``,
    shared. Returns the CPUs and how they were chosen."""
    from dlbench.host import gpus

    lock_dir = lock_dir or os.path.join(tempfile.gettempdir(), "dlbench-cpu-locks")
    os.makedirs(lock_dir, exist_ok=True)
    held = []
    for cpu in cpus:
        handle = gpus.try_lock(os.path.join(lock_dir, "cpu{}.lock".format(cpu)))
        if handle is not None:
            held.append((cpu, handle))
        if len(held) == count:
            _CLAIMED.extend(handle for _, handle in held)
            return [cpu for cpu, _ in held], "claimed: lock files in {}".format(lock_dir)
    for _, handle in held:
        handle.close()
    return list(cpus[:count]), "shared: fewer than {} CPUs unclaimed".format(count)


def release_cpus() -> None:
    """Gives back the CPUs ``claim_cpus`` took (the process' end does too)."""
    while _CLAIMED:
        _CLAIMED.pop().close()


def pin_to_cpus(threads: int, cpus: Optional[List[int]] = None) -> List[int]:
    """Restrict this process to ``threads`` CPUs (of ``cpus`` when given), so
    that frameworks which size their pools from the CPU count (XLA,
    TensorFlow) see exactly that many."""
    cpus = (cpus or available_cpus())[:threads]
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)
    return cpus


# Linux's autogroups: every session's processes share the CPU as one group
# against the other sessions', whatever their own nice values, and a new
# session's group starts at nice 0. See sched(7).
AUTOGROUP = "/proc/self/autogroup"


def autogroup_nice() -> Optional[int]:
    """The nice value of this process' session group, or None where the
    kernel has no autogroups."""
    try:
        with open(AUTOGROUP) as handle:
            return int(handle.read().rsplit("nice", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


def inherited_nice() -> int:
    """The nice value a new session started here should take: this
    process' own or its session group's, whichever is lower priority."""
    group = autogroup_nice()
    own = os.getpriority(os.PRIO_PROCESS, 0)
    return own if group is None else max(group, own)


def set_autogroup_nice(nice: Optional[int]) -> Optional[str]:
    """Gives this process' session group the nice value ``nice``. Returns
    None where the kernel took it, else why not: where the kernel has no
    autogroups, or refuses (a lower value without the privilege; a change
    within 100 ms of another one without CAP_SYS_ADMIN), nothing changes."""
    if nice is None:
        return None
    try:
        with open(AUTOGROUP, "w") as handle:
            handle.write(str(nice))
    except OSError as error:
        return "{} not written: {}".format(AUTOGROUP, error)
    return None


# The supervisor names in a variable of the run's process the file in which its
# process, before it starts, notes the priority it was asked for and what it
# got (``note_priority``); the run's record keeps the note (``runtime``).
PRIORITY_NOTE_VARIABLE = "DLBENCH_PRIORITY_NOTE"


def note_priority(path: str, asked: Optional[int], reason: Optional[str]) -> None:
    """Writes what ``priority`` reads: the session group's nice value asked
    for, the one it has now, and why the two differ (None where they do
    not). Runs where a failure has nowhere to go but the note (between fork
    and exec): a note not written is told by ``priority``."""
    applied = autogroup_nice()
    if reason is None and applied != asked:
        reason = "{} reads {}".format(
            AUTOGROUP, "no nice value" if applied is None else "nice {}".format(applied)
        )
    note = {"setting": "session group nice (autogroup)", "asked": asked, "applied": applied}
    note["not_applied"] = reason
    try:
        with open(path, "w") as handle:
            handle.write(json.dumps(note))
    except OSError:
        pass


def priority(environ: Optional[Mapping[str, str]] = None) -> Optional[Dict[str, Any]]:
    """The priority the supervisor asked for this run and what it got
    (``note_priority``), or None where no supervisor started it."""
    path = (os.environ if environ is None else environ).get(PRIORITY_NOTE_VARIABLE)
    if not path:
        return None
    try:
        with open(path) as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        return {
            "setting": "session group nice (autogroup)",
            "not_applied": "not known: the supervisor's note {} could not be read ({})".format(
                path, error
            ),
        }


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def utc_now() -> str:
    return datetime.datetime.utcnow().replace(microsecond=0).isoformat() + "Z"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


# The CPU's instructions for reduced-precision arithmetic (/proc/cpuinfo's
# names): without any of the bfloat16 ones, bfloat16 is converted to float32
# and back in software, and a mixed_bfloat16 run measures that emulation.
REDUCED_PRECISION_FLAGS = (
    "avx512_bf16",  # bfloat16 dot products (Cooper Lake, Zen 4)
    "amx_bf16",  # bfloat16 matrix tiles (Sapphire Rapids)
    "amx_fp16",  # float16 matrix tiles (Granite Rapids)
    "avx512_fp16",  # float16 arithmetic (Sapphire Rapids)
    "avx512_vnni",
    "f16c",  # float16 <-> float32 conversion only
    "avx512f",
    "avx2",
    "fma",
)


def cpu_precision_flags() -> List[str]:
    """Which of ``REDUCED_PRECISION_FLAGS`` this CPU has (empty off Linux,
    and where the flags cannot be read: ``cpu_isa.flags_unreadable``)."""
    present = cpu_isa.cpu_flags()
    return [flag for flag in REDUCED_PRECISION_FLAGS if flag in present]


def _command_output(args: List[str], cwd: Optional[str] = None) -> Optional[str]:
    try:
        out = subprocess.check_output(args, cwd=cwd, stderr=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.decode("utf-8", "replace").strip()


def gpus() -> List[Dict[str, str]]:
    """GPU models and driver as nvidia-smi reports them; empty without one."""
    out = _command_output(
        ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]
    )
    if not out:
        return []
    found = []
    for line in out.splitlines():
        name, _, driver = line.partition(",")
        found.append({"name": name.strip(), "driver": driver.strip()})
    return found


def git_commit(path: str) -> Optional[str]:
    commit = _command_output(["git", "rev-parse", "HEAD"], cwd=path)
    if commit is None:
        return None
    dirty = _command_output(["git", "status", "--porcelain", "-uno"], cwd=path)
    return commit + ("-dirty" if dirty else "")


def observed(threads: int, cpus: Optional[List[int]]) -> Dict[str, Any]:
    """What the run finds in effect (the record's ``runtime``): Python, the
    platform and host, the CPU (model, flags, ISA), threads and pinned CPUs,
    priority, load, GPUs and the workflow's commit."""
    here = os.path.dirname(os.path.abspath(__file__))
    return {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "platform": platform.platform(),
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_precision_flags": cpu_precision_flags(),
        "cpu_isa": cpu_isa.describe(),
        # not an empty list of flags, a level of none: why the flags are not known
        "cpu_flags_unreadable": cpu_isa.flags_unreadable(),
        "cpu_count": os.cpu_count(),
        "threads": threads,
        "cpus_pinned": cpus,
        "priority": priority(),
        "load_average_at_start": list(os.getloadavg()),
        "gpus": gpus(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "slurm_job_id": os.environ.get("SLURM_JOB_ID"),
        "workflow_commit": git_commit(here),
    }


def write_json_atomic(path: str, payload: Any) -> None:
    """Write to a temporary name and rename, so that a reader never sees a
    half-written file: the record exists complete or not at all."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = path + ".tmp-{}".format(os.getpid())
    with open(tmp, "w") as handle:
        json.dump(payload, handle, indent=2, sort_keys=True, default=str)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


# Written into an environment by its build step when the environment needs
# variables set before its process starts (CNTK's OpenMPI libraries).
ENVIRONMENT_ADDITIONS = "dlbench-env.json"


def prefix_of(python: str) -> str:
    """The environment an interpreter belongs to."""
    if python == sys.executable:
        return sys.prefix
    found = shutil.which(python) or python
    return os.path.dirname(os.path.dirname(os.path.abspath(found)))


def environment_additions(prefix: str, env: Mapping[str, str]) -> Dict[str, str]:
    """Variables the environment at ``prefix`` asks for: path lists are put
    in front of what ``env`` has."""
    path = os.path.join(prefix, ENVIRONMENT_ADDITIONS)
    if not os.path.exists(path):
        return {}
    with open(path) as handle:
        wanted = json.load(handle)
    found = {}
    for name, value in wanted.items():
        if isinstance(value, list):
            value = os.pathsep.join(value + [part for part in [env.get(name)] if part])
        found[name] = value
    return found
