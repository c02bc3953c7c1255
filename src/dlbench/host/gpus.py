"""One GPU set per job: distinct device ids for concurrent local runs.

Snakemake running locally counts a ``gpu`` resource but hands out no device
ids, so two jobs started with ``-j2`` on a 2-GPU box would both see every GPU.
A run takes its ids here: one lock file per GPU under a folder shared by the
jobs, held with ``flock`` for as long as the run lasts. The kernel releases a
lock when its holder exits, however it exits, so a killed run never leaves a
GPU taken. Importable on Python 3.6.
"""

import errno
import fcntl
import os
import subprocess
import tempfile
import time
from typing import IO, Any, Dict, Iterable, List, Mapping, Optional


class GPUsUnavailable(RuntimeError):
    """Fewer GPUs exist than a run asks for, or none came free in time."""


def visible_gpus(environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """The GPU ids this process may use: CUDA_VISIBLE_DEVICES when set (a
    cluster's allocation), else every GPU ``nvidia-smi`` lists, else none."""
    environ = os.environ if environ is None else environ
    if environ.get("CUDA_VISIBLE_DEVICES") is not None:
        return [i for i in environ["CUDA_VISIBLE_DEVICES"].split(",") if i.strip() != ""]
    try:
        out = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
            stderr=subprocess.DEVNULL,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.decode().splitlines() if line.strip()]


class Allocation(object):
    """GPU ids held by this process until ``release`` (or exit)."""

    def __init__(
        self, ids: List[str], handles: List[IO[str]], assigned_by: str = "dlbench lock files"
    ) -> None:
        self.ids = ids
        self._handles = handles
        self.assigned_by = assigned_by

    def environment(self) -> Dict[str, str]:
        """What the run's process needs to see exactly its GPUs."""
        return {"CUDA_VISIBLE_DEVICES": ",".join(self.ids)}

    def release(self) -> None:
        for handle in self._handles:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def try_lock(path: str) -> Optional[IO[str]]:
    handle = open(path, "a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        handle.close()
        if error.errno in (errno.EAGAIN, errno.EACCES):
            return None
        raise
    return handle


def allocate(
    count: int,
    pool: Iterable[Any],  # GPU ids, as numbers or text
    lock_dir: str,
    timeout_s: Optional[float] = None,
    poll_s: float = 0.5,
) -> Allocation:
    """Take ``count`` GPUs of ``pool`` that no other run holds, waiting for
    them up to ``timeout_s`` (forever when None). All or nothing: a run
    never holds part of its set while it waits for the rest."""
    pool = [str(gpu) for gpu in pool]
    if count > len(pool):
        raise GPUsUnavailable(
            "a run asks for {} GPUs; only {} are visible ({})".format(
                count, len(pool), ",".join(pool) or "none"
            )
        )
    if not os.path.isdir(lock_dir):
        os.makedirs(lock_dir, exist_ok=True)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while True:
        held = []
        for gpu in pool:
            handle = try_lock(os.path.join(lock_dir, "gpu{}.lock".format(gpu)))
            if handle is not None:
                held.append((gpu, handle))
                if len(held) == count:
                    return Allocation([g for g, _ in held], [h for _, h in held])
        Allocation([], [h for _, h in held]).release()
        if deadline is not None and time.monotonic() >= deadline:
            raise GPUsUnavailable(
                "no {} of GPUs {} came free within {} s".format(count, ",".join(pool), timeout_s)
            )
        time.sleep(poll_s)


def default_lock_dir() -> str:
    """Shared by every workflow of this machine's users, so that two
    workflows on one box do not time runs on the same GPU either."""
    return os.path.join(tempfile.gettempdir(), "dlbench-gpu-locks")


def assign(
    count: int,
    lock_dir: Optional[str] = None,
    timeout_s: Optional[float] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> Allocation:
    """The GPUs of one run. Inside a SLURM job the scheduler has already
    given the job its GPUs (CUDA_VISIBLE_DEVICES): the run takes those.
    Elsewhere it takes ``count`` free GPUs under the lock files."""
    environ = os.environ if environ is None else environ
    visible = visible_gpus(environ)
    if environ.get("SLURM_JOB_ID") and environ.get("CUDA_VISIBLE_DEVICES") is not None:
        if count > len(visible):
            raise GPUsUnavailable(
                "a run asks for {} GPUs; the SLURM job has {} ({})".format(
                    count, len(visible), ",".join(visible) or "none"
                )
            )
        return Allocation(visible[:count], [], assigned_by="SLURM")
    lock_dir = lock_dir or default_lock_dir()
    allocation = allocate(count, visible, lock_dir, timeout_s=timeout_s)
    allocation.assigned_by = "dlbench lock files in {}".format(lock_dir)
    return allocation
