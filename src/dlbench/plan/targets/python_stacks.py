"""workflow/rules/python_stacks.smk: each cell's python stacks, one run beside
the timed ones that py-spy samples (config ``python_stacks``;
dlbench.run.stack_sampling), and the tables and plots read from them."""

import shlex
import shutil
import sys
from pathlib import Path

from dlbench.plan import paths, run_spec
from dlbench.plan.targets.common import TargetsBase


class PythonStacksTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/python_stacks.smk's rules."""

    def python_stacks_runs(self):
        """The runs sampled by py-spy: each cell of this machine once (its
        first repeat's spec), of the workloads the config's ``python_stacks``
        names (all where true), where the cell runs in one process (py-spy
        samples one)."""
        chosen = self.config.get("python_stacks", False)
        found = []
        for run in self.runs:
            entry = self.workload(run.dataset, run.model)
            if run.repeat != 1 or not run_spec.workload_chosen(chosen, entry):
                continue
            _, parallel = run_spec.data_parallel(self.config, entry, int(run.devices), run.backend)
            if parallel["launch"] == "one_process":
                found.append(run)
        return found

    def python_stacks_files(self, name):
        """The file ``name`` of every sampled run: sampling.json (what was
        sampled), stacks.txt (the samples) or run.json (the sampled run's
        record)."""
        return [f"{paths.python_stacks_dir(run)}/{name}" for run in self.python_stacks_runs()]

    def flame_graphs(self):
        return [f"{paths.python_stacks_dir(run)}/flame.png" for run in self.python_stacks_runs()]

    def python_stacks_workloads(self):
        """(dataset, model) of the workloads with a sampled cell, in the config's order."""
        sampled = {(run.dataset, run.model) for run in self.python_stacks_runs()}
        return [
            (w["dataset"], w["model"])
            for w in self.config["workloads"]
            if (w["dataset"], w["model"]) in sampled
        ]

    def sampler(self):
        """py-spy of the workflow's environment (beside its interpreter), else
        the one on PATH; "" where there is none (sampling.json says so)."""
        beside = Path(sys.executable).parent / "py-spy"
        if beside.exists():
            return str(beside)
        return shutil.which("py-spy") or ""

    def python_stacks_options(self, wildcards, input, output):
        """The supervisor's options of a timed run, and the sampler's."""
        options = self.supervisor_options(wildcards, input)
        options += f"--sampler {shlex.quote(self.sampler() or 'none')} "
        return (
            options
            + f"--stacks {shlex.quote(output.stacks)} --sampling {shlex.quote(output.sampling)}"
        )
