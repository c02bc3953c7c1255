"""workflow/rules/equivalence.smk: the equivalence check's runs, and the inference records
compared."""

import json

from dlbench.plan import paths, run_spec
from dlbench.plan.targets.common import TargetsBase


class EquivalenceTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/equivalence.smk's rules."""

    def check_spec(self, wildcards):
        spec = run_spec.check_spec(self.config, self.run_of(wildcards))
        return json.dumps(spec.as_json(), sort_keys=True)

    def check_records(self):
        """The equivalence check's records (dlbench.run.equivalence)."""
        return [f"{paths.check_dir(run)}/check.json" for run in self.check_runs]

    def inference_records(self):
        """This machine's inference run records, whose predictions are compared."""
        return [
            f"{paths.run_dir(run)}/run.json"
            for run in self.runs
            if self.workload(run.dataset, run.model)["task"] == "infer"
        ]
