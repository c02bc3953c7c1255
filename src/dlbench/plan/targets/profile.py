"""workflow/rules/profile.smk: each cell's profile, one run beside the timed
ones (dlbench.run.profiling), and the tables and plots read from them."""

import shlex
import shutil
import sys
from pathlib import Path

from dlbench.plan import paths, run_spec
from dlbench.plan.targets.common import PlanBase


class ProfileTargets(PlanBase):
    """The inputs and parameters of workflow/rules/profile.smk's rules."""

    def profile_runs(self):
        """The runs sampled by py-spy: each cell of this machine once (its
        first repeat's spec), of the workloads the config's ``python_stacks``
        names (all where true), where the cell runs in one process (the
        profile samples one)."""
        chosen = self.config.get("python_stacks", False)
        found = []
        for run in self.runs:
            entry = self.workload(run.dataset, run.model)
            if run.repeat != 1 or not run_spec.profiled(chosen, entry):
                continue
            _, parallel = run_spec.data_parallel(self.config, entry, int(run.devices), run.backend)
            if parallel["launch"] == "one_process":
                found.append(run)
        return found

    def op_profiled_runs(self):
        """The runs that take an op profile after their clocks (config
        ``profile``): every run of the workloads it names."""
        chosen = self.config.get("profile", True)
        return [
            run
            for run in self.runs
            if run_spec.profiled(chosen, self.workload(run.dataset, run.model))
        ]

    def op_profile_files(self, name):
        """The file ``name`` of every op-profiled run: ops.json or run.json."""
        return [f"{paths.run_dir(run)}/{name}" for run in self.op_profiled_runs()]

    def op_profiled_workloads(self):
        """(dataset, model) of the workloads with op profiles, in the config's order."""
        profiled = {(run.dataset, run.model) for run in self.op_profiled_runs()}
        return [
            (w["dataset"], w["model"])
            for w in self.config["workloads"]
            if (w["dataset"], w["model"]) in profiled
        ]

    def front_page_inputs(self, wildcards):
        """The summary, the significance table and, where runs take op
        profiles, the gaps op by op."""
        inputs = {"summary": "results/summary.csv", "pairs": "results/tables/significance.csv"}
        if self.op_profiled_runs():
            inputs["op_gaps"] = "results/tables/op_gaps.csv"
        return inputs

    def profile_files(self, name):
        """The file ``name`` of every profile: profile.json (what was sampled),
        stacks.txt (the samples) or run.json (the profiled run's record)."""
        return [f"{paths.profile_dir(run)}/{name}" for run in self.profile_runs()]

    def flame_graphs(self):
        return [f"{paths.profile_dir(run)}/flame.png" for run in self.profile_runs()]

    def profiled_workloads(self):
        """(dataset, model) of the workloads with a profiled cell, in the config's order."""
        profiled = {(run.dataset, run.model) for run in self.profile_runs()}
        return [
            (w["dataset"], w["model"])
            for w in self.config["workloads"]
            if (w["dataset"], w["model"]) in profiled
        ]

    def profiler(self):
        """py-spy of the workflow's environment (beside its interpreter), else
        the one on PATH; "" where there is none (the profiles say so)."""
        beside = Path(sys.executable).parent / "py-spy"
        if beside.exists():
            return str(beside)
        return shutil.which("py-spy") or ""

    def profile_options(self, wildcards, input, output):
        """The supervisor's options of a timed run, and the profiler's."""
        options = self.supervisor_options(wildcards, input)
        options += f"--profiler {shlex.quote(self.profiler() or 'none')} "
        return (
            options
            + f"--stacks {shlex.quote(output.stacks)} --profile {shlex.quote(output.profile)}"
        )
