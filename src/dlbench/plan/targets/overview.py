"""workflow/rules/overview.smk: the data, FLOPs and probes behind the overview's tables."""

import shlex

from dlbench import catalog
from dlbench.plan import matrix, paths
from dlbench.plan.targets.common import TORCH_ON_GPUS, TargetsBase


class OverviewTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/overview.smk's rules."""

    def workload_data(self):
        """The prepared dataset of every configured workload, in config order."""
        return [f"results/data/{dataset}.npz" for dataset, _, _ in self.workloads]

    def counted_flops(self):
        """The counted FLOPs of every workload of a model of the user's."""
        if not self.keras_on_torch_available():
            return {}
        return {
            f"{dataset}/{model}": f"results/flops/{dataset}/{model}.json"
            for dataset, model, _ in self.workloads
            if self.registry.is_custom(model)
        }

    def machine_probes(self):
        """This machine's matrix-product probe (rule cpu_probe) at each thread
        count and precision a run on the CPU takes, and in float32 at its
        thread count (utilisation sets a reduced precision's probe beside
        float32's), where keras-torch is at hand. A thread count and
        precision that no run takes together is not measured: a probe is up
        to a minute of the whole CPU."""
        if not self.keras_on_torch_available():
            return []
        taken = [
            (run.threads, precision)
            for run in self.runs
            if not self.timed_on_gpus(run)
            for precision in (catalog.FLOAT32, run.precision)
        ]
        return [
            paths.cpu_probe(self.machine, threads, precision)
            for threads, precision in dict.fromkeys(taken)
        ]

    def probe_inputs(self, environment):
        """A probe's code and the environment it runs in (rules cpu_probe, gpu_probe)."""
        inputs = {"code": self.code("run/probe")}
        marker = self.environment_marker(environment)
        if marker:
            inputs["env"] = marker
        return inputs

    def gpu_probes(self):
        """One GPU's matrix-product probe per precision (rule gpu_probe), where
        the config runs on GPUs and keras-torch's CUDA interpreter is at hand."""
        on_gpus = self.config["accelerator"] == "gpu" and any(
            int(devices) > 0 for devices in matrix.every_dimension_value(self.config, "devices")
        )
        if not on_gpus or not self.interpreter_available(TORCH_ON_GPUS):
            return []
        return [
            paths.gpu_probe(self.machine, precision)
            for precision in matrix.every_dimension_value(self.config, "precision")
        ]

    def flops_count_inputs(self, wildcards):
        code = self.code("run/flops_count")
        return dict(
            self.keras_model_inputs(wildcards), code=code, **self.model_check_input(wildcards)
        )

    def gpu_lock_dir(self, wildcards):
        """The folder of GPU claims that other users' jobs share, quoted."""
        return shlex.quote(self.config["gpu_lock_dir"] or "")
