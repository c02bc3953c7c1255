"""How a run is started on its devices: the command, the environment and the
share of the CPUs of each process. The same for every backend; the catalog's
``data_parallel.launch`` picks one of ``LAUNCHERS``. Importable on Python 3.6.

- ``one_process``: one harness process drives every device of the run
  (Keras' DataParallel on JAX, TensorFlow's MirroredStrategy).
- ``process_per_device``: torchrun starts one harness process per device;
  each knows its place from torchrun's RANK / LOCAL_RANK / WORLD_SIZE, takes
  its share of every global batch (``shard_epoch``) and only rank 0 writes
  the record.

Devices 0 is the CPU: GPUs are hidden from the run. Devices N >= 1 are the N
GPUs the supervisor assigned (CUDA_VISIBLE_DEVICES), or N devices emulated on
the CPU when the config's accelerator is ``emulated-cpu``. One device runs the
framework's single-device program in one process, as a user runs one GPU:
the launchers and data-parallel wrappers start at two (``distributes``).
"""

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from dlbench.host import runtime
from dlbench.record.run_spec import RunSpec

if TYPE_CHECKING:
    import numpy

# A run's ``parallel`` block (plan.run_spec.data_parallel): devices,
# accelerator, replicas, launch, method..., and in a process its place (rank,
# local_rank, processes).
Parallel = Dict[str, Any]

LAUNCHERS = ("one_process", "process_per_device")
ON_THE_CPU: Parallel = {
    "devices": 0,
    "accelerator": "cpu",
    "replicas": 1,
    "launch": "one_process",
    "method": None,
}


def distributes(parallel: Parallel) -> bool:
    """Whether a run trains data-parallel: on two devices or more."""
    return parallel["devices"] >= 2


def emulated_devices(parallel: Parallel) -> int:
    """How many CPU devices the framework must emulate: none for one device,
    which is the CPU itself."""
    if parallel["accelerator"] == "emulated-cpu" and distributes(parallel):
        return parallel["devices"]
    return 0


def one_process_on_the_cpu() -> Parallel:
    """The ``parallel`` block of a process that sets a backend up outside a
    run (a check of its environment, a draw, a preparation): the only one."""
    return dict(ON_THE_CPU, rank=0, local_rank=0, processes=1)


def parallel_of(spec: RunSpec) -> Parallel:
    """The ``parallel`` block (plan.run_spec.data_parallel) of the run
    ``spec`` (a RunSpec); a spec without one runs on the CPU."""
    return dict(ON_THE_CPU, **(spec.parallel or {}))


def processes(parallel: Parallel) -> int:
    """How many harness processes a run starts."""
    if parallel["launch"] == "process_per_device":
        return parallel["replicas"]
    return 1


def command(
    python: str, parallel: Parallel, harness_args: List[str], log_dir: Optional[str] = None
) -> List[str]:
    """The command line that starts the harness for a run; torchrun keeps its
    per-process logs under ``log_dir`` (else in a folder of its own in /tmp
    that it never removes)."""
    if parallel["launch"] not in LAUNCHERS:
        raise ValueError("unknown launcher {!r}".format(parallel["launch"]))
    if parallel["launch"] == "process_per_device":
        # --standalone: a free port per run, so that concurrent runs never meet
        torchrun = [python, "-m", "torch.distributed.run", "--standalone", "--nnodes=1"]
        torchrun.append("--nproc-per-node={}".format(processes(parallel)))
        if log_dir:
            torchrun += ["--log-dir", log_dir]
        return torchrun + ["-m", "dlbench.run.harness"] + harness_args
    return [python, "-m", "dlbench.run.harness"] + harness_args


def environment(parallel: Parallel, gpu_ids: Optional[List[str]] = None) -> Dict[str, str]:
    """Variables the run's processes must start with."""
    if parallel["devices"] and parallel["accelerator"] == "gpu":
        return {"CUDA_VISIBLE_DEVICES": ",".join(gpu_ids or [])}
    # The CPU, real or emulating devices: frameworks must not find a GPU.
    return {"CUDA_VISIBLE_DEVICES": "", "JAX_PLATFORMS": "cpu"}


def threads_per_process(threads: int, parallel: Parallel) -> int:
    return max(1, threads // processes(parallel))


def process_place(environ: Optional[Mapping[str, str]] = None) -> Tuple[int, int, int]:
    """(rank, local rank, world size) of this process; (0, 0, 1) when it was
    not started by torchrun."""
    environ = os.environ if environ is None else environ
    return (
        int(environ.get("RANK", 0)),
        int(environ.get("LOCAL_RANK", 0)),
        int(environ.get("WORLD_SIZE", 1)),
    )


def cpus_of(cpus: List[int], threads: int, local_rank: int) -> List[int]:
    """The CPUs of one process: its own slice when processes share a node."""
    start = local_rank * threads
    mine = cpus[start : start + threads]
    return mine or cpus[:threads]


def pin_cpus(
    threads: int, local_rank: int, processes_count: int
) -> Tuple[List[int], Optional[str]]:
    """This process' CPUs, pinned, and its claim on them: one process of
    fewer threads than CPUs claims CPUs no other run holds, one of several
    processes takes its own slice."""
    available = runtime.available_cpus()
    chosen, claim = cpus_of(available, threads, local_rank), None
    if processes_count == 1 and threads < len(available):
        chosen, claim = runtime.claim_cpus(threads, available)
    return runtime.pin_to_cpus(threads, chosen), claim


def shard_epoch(
    order: "numpy.ndarray", global_batch: int, replicas: int, rank: int, processes_count: int
) -> Tuple["numpy.ndarray", int]:
    """The sample order one process trains on in an epoch.

    Trailing samples that cannot be split evenly over the replicas are
    dropped (at most ``replicas - 1``; every framework's sharding needs
    equal shares). With one process per device, each takes its contiguous
    share of every global batch, so the replicas together step through the
    same batches in the same order as a single device would.
    Returns the order and how many samples were dropped.
    """
    dropped = len(order) % replicas
    order = order[: len(order) - dropped]
    if processes_count == 1:
        return order, dropped
    import numpy as np

    parts = []
    for start in range(0, len(order), global_batch):
        batch = order[start : start + global_batch]
        share = len(batch) // processes_count
        parts.append(batch[rank * share : (rank + 1) * share])
    return np.concatenate(parts), dropped


def quiet_unless_first(rank: int) -> None:
    """Processes other than rank 0 keep their errors (stderr) but not their
    progress lines, which rank 0 prints for the run."""
    if rank != 0:
        sys.stdout = open(os.devnull, "w")
