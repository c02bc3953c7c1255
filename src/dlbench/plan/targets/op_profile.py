"""workflow/rules/op_profile.smk: the op profiles every timed run takes after
its clocks (config ``op_profile``; dlbench.run.op_profiling), and the tables
and plots read from them."""

from dlbench.plan import paths, run_spec
from dlbench.plan.targets.common import TargetsBase


class OpProfileTargets(TargetsBase):
    """The inputs of workflow/rules/op_profile.smk's rules (and the front
    page's, which gives each workload's largest op gap)."""

    def op_profiled_runs(self):
        """The runs that take an op profile after their clocks (config
        ``op_profile``): every run of the workloads it names."""
        chosen = self.config.get("op_profile", True)
        return [
            run
            for run in self.runs
            if run_spec.workload_chosen(chosen, self.workload(run.dataset, run.model))
        ]

    def op_profile_files(self, name):
        """The file ``name`` of every op-profiled run: ops.json or run.json."""
        return [f"{paths.run_dir(run)}/{name}" for run in self.op_profiled_runs()]

    def ops_table(self):
        """The op tables' CSV where runs take op profiles, else nothing."""
        return ["results/tables/ops.csv"] if self.op_profiled_runs() else []

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
        profiles, the gaps op by op; where a workload measures its time to
        accuracy, that table and its pairs."""
        inputs = {"summary": "results/summary.csv", "pairs": "results/tables/significance.csv"}
        if self.op_profiled_runs():
            inputs["op_gaps"] = "results/tables/op_gaps.csv"
        if self.time_to_accuracy_workloads():
            inputs["time_to_accuracy"] = "results/tables/time_to_accuracy.csv"
            inputs["time_to_accuracy_pairs"] = "results/tables/time_to_accuracy_pairs.csv"
        return inputs
