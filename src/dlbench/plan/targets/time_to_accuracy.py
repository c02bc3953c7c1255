"""workflow/rules/time_to_accuracy.smk: the time-to-accuracy tables and
plots of the workloads that measure it (a workload's ``time_to_accuracy``)."""

from dlbench.plan.targets.common import TargetsBase


class TimeToAccuracyTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/time_to_accuracy.smk's rules."""

    def time_to_accuracy_workloads(self):
        """(dataset, model) of the training workloads with a
        ``time_to_accuracy``, in the config's order."""
        return [
            (entry["dataset"], entry["model"])
            for entry in self.config["workloads"]
            if entry.get("time_to_accuracy") and entry.get("task", "train") == "train"
        ]

    def time_to_accuracy_settings(self):
        """{"dataset/model": its ``time_to_accuracy``} (the rule's parameter:
        a changed target makes the tables again)."""
        return {
            f"{dataset}/{model}": self.workload(dataset, model)["time_to_accuracy"]
            for dataset, model in self.time_to_accuracy_workloads()
        }
