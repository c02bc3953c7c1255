"""Where a run's files are: its record's folder (``RUN_DIR``), an equivalence
check's (``CHECK_DIR``), the shared and trained initial weights; and the
cell a record's path names (``run_of_path``). Also the machines' probes
(``CPU_PROBE``, ``GPU_PROBE``), the folders a GPU campaign packs and the
GPU kit's (``KIT_DIR``)."""

import os
import re
from pathlib import PurePosixPath
from typing import Any, Dict, Optional, Union

from dlbench.plan import matrix

# A file's path, as the workflow (text) and the tests (pathlib) give it.
PathLike = Union[str, "os.PathLike[str]"]

RUN_DIR = "results/runs/{machine}/{dataset}/{model}/{backend}/"
RUN_DIR += "/".join("%s={%s}" % (name, name) for name in matrix.DIMENSION_NAMES) + "/rep{repeat}"


# The equivalence check (dlbench.run.equivalence): one run per training workload
# and backend, beside the timed runs, never among them.
CHECK_DIR = RUN_DIR.replace("results/runs/", "results/checks/", 1)


def run_of_path(path: PathLike) -> Optional[Dict[str, Any]]:
    """The cell and repeat a run record's path names (``RUN_DIR``, or
    ``CHECK_DIR`` for an equivalence check's record), or None."""
    pattern = re.escape(RUN_DIR).replace(r"\{", "{").replace(r"\}", "}")
    pattern = re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", pattern)
    pattern = pattern.replace("results/runs/", "results/(?:runs|checks)/", 1)
    found = re.search(pattern + r"/(?:run|check)\.json$", str(path))
    if found is None:
        return None
    fields = found.groupdict()
    try:
        for dimension in matrix.DIMENSIONS:
            fields[dimension.name] = dimension.parse(fields[dimension.name])
        fields["repeat"] = int(fields["repeat"])
    except ValueError:
        return None
    return fields


def run_dir(run: matrix.Run) -> str:
    return str(PurePosixPath(RUN_DIR.format(**run._asdict())))


def check_dir(run: matrix.Run) -> str:
    return str(PurePosixPath(CHECK_DIR.format(**run._asdict())))


# A cell's python stacks (dlbench.run.stack_sampling): one run beside the
# timed ones, never among them, at the first repeat's seed.
PYTHON_STACKS_DIR = RUN_DIR.replace("results/runs/", "results/python_stacks/", 1)


def python_stacks_dir(run: matrix.Run) -> str:
    return str(PurePosixPath(PYTHON_STACKS_DIR.format(**run._asdict())))


# The shared initial weights of a workload and seed (dlbench.models.initial_weights),
# and an inference workload's trained from them (dlbench.run.trained_weights).
WEIGHTS = "results/weights/{dataset}/{model}/seed{seed}.npz"


TRAINED_WEIGHTS = "results/weights/{dataset}/{model}/trained_seed{seed}.npz"


# The matrix-product probes (dlbench.run.probe, rules cpu_probe and gpu_probe):
# the peaks that utilisation divides by, one per thread count and precision on
# the CPU, one per precision on a GPU.
PROBES_DIR = "results/probes/"
CPU_PROBE = PROBES_DIR + "{machine}/threads={threads}/precision={precision}.json"
GPU_PROBE = PROBES_DIR + "{machine}/gpu/precision={precision}.json"


def cpu_probe(machine: str, threads: Union[int, str], precision: str) -> str:
    """The CPU probe of ``machine`` at a thread count and precision (rule cpu_probe)."""
    return CPU_PROBE.format(machine=machine, threads=threads, precision=precision)


def gpu_probe(machine: str, precision: str) -> str:
    """The GPU probe of ``machine`` in a precision (rule gpu_probe)."""
    return GPU_PROBE.format(machine=machine, precision=precision)


def is_gpu_probe(path: str) -> bool:
    """Whether ``path`` (a project-relative path, as a pack names it) is a GPU's probe."""
    return path.startswith(PROBES_DIR) and "/gpu/" in path


# The folders whose records, tables, plots and logs a GPU campaign packs, the
# machine's own pack (rule pack) and the report.
RESULTS_DIR = "results"
LOGS_DIR = "logs"
MACHINE_PACKS_DIR = "results/pack"
REPORT = "results/report.html"
GPU_CAMPAIGN_LOG = "logs/gpu_campaign.log"

# The records of earlier GPU campaigns (an H200's) that the project keeps: the
# GPU campaign's dry run estimates its stages from them.
EARLIER_GPU_RECORDS = "records/gpu/runs"

# The GPU kit (make gpu-kit, dlbench.environments.gpu_kit): the wheels a GPU
# machine without network lacks, from which the GPU campaign prepares its
# interpreter (dlbench.campaign.interpreter).
KIT_DIR = ".gpu-kit"
