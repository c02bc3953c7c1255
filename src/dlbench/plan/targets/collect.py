"""workflow/rules/collect.smk: the run records and the workload tables' inputs."""

from dlbench.plan import comparisons, matrix, paths
from dlbench.plan.targets.common import TargetsBase


class CollectTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/collect.smk's rules."""

    def run_records(self):
        return [f"{paths.run_dir(run)}/run.json" for run in self.runs]

    def workload_table_inputs(self, wildcards):
        """The summary, and the table that checks the workload's backends
        compute the same: the equivalence check (training) or the predictions
        from the same weights (inference)."""
        inputs = {"summary": "results/summary.csv"}
        checked = {(run.dataset, run.model) for run in self.check_runs}
        task = self.workload(wildcards.dataset, wildcards.model)["task"]
        if (wildcards.dataset, wildcards.model) in checked:
            inputs["checks"] = "results/tables/equivalence.csv"
        elif task == "infer" and comparisons.predictions_compared(self.config):
            inputs["checks"] = "results/tables/predictions.csv"
        return inputs

    def accuracy_tolerances(self):
        """Accuracy parity is judged on every workload but those on random labels."""
        return {
            (entry["dataset"], entry["model"]): matrix.accuracy_tolerance(self.config, entry)
            for entry in self.config["workloads"]
            if not self.registry.speed_only(entry["dataset"])
        }
