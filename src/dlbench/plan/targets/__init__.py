"""What the workflow plans, as functions of the config: the targets, each
rule's inputs and parameters, the environments and interpreters, the code
digests' files. workflow/rules/common.smk makes one ``WorkflowTargets``,
``targets``, from the validated config and the rules call its methods
(input functions take the job's wildcards: any object with the wildcards as
attributes).

Paths are relative to the working directory, as Snakemake keeps them: an
output's set of input paths that were absolute made a copied or moved
workflow folder re-run everything.

One module per rule file (``targets/<file>.py`` for
``workflow/rules/<file>.smk``: the inputs and parameters of its rules) and
``common``, what they share; ``WorkflowTargets`` is all of them.
"""

from dlbench.plan.targets.bench import BenchTargets
from dlbench.plan.targets.collect import CollectTargets
from dlbench.plan.targets.common import (
    ENV_MODES,
    KERAS_ON_TORCH,
    SETUP_SHARE,
    TORCH_ON_GPUS,
    WHOLE_CPU,
    TargetsBase,
)
from dlbench.plan.targets.compare import CompareTargets
from dlbench.plan.targets.data import DataTargets
from dlbench.plan.targets.envs import EnvsTargets
from dlbench.plan.targets.equivalence import EquivalenceTargets
from dlbench.plan.targets.machines import MachinesTargets
from dlbench.plan.targets.op_profile import OpProfileTargets
from dlbench.plan.targets.overview import OverviewTargets
from dlbench.plan.targets.python_stacks import PythonStacksTargets
from dlbench.plan.targets.time_to_accuracy import TimeToAccuracyTargets

__all__ = [
    "ENV_MODES",
    "KERAS_ON_TORCH",
    "SETUP_SHARE",
    "TORCH_ON_GPUS",
    "WHOLE_CPU",
    "WorkflowTargets",
]


class WorkflowTargets(
    DataTargets,
    EnvsTargets,
    BenchTargets,
    EquivalenceTargets,
    CollectTargets,
    CompareTargets,
    OverviewTargets,
    OpProfileTargets,
    PythonStacksTargets,
    TimeToAccuracyTargets,
    MachinesTargets,
    TargetsBase,
):
    """The workflow's targets of one validated config (whose ``machine`` is
    already resolved): ``basedir`` is the workflow's folder, ``env_mode``
    the environments' mode (venv or conda: the config's, or Snakemake's
    deployment method under ``auto``)."""
