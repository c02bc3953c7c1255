"""What every targets module shares (``TargetsBase``): the config, the runs, the environments and
interpreters they take."""

import os
import sys
from pathlib import Path

from dlbench import catalog
from dlbench.plan import comparisons, config_registry, matrix, paths, run_spec

# The workflow builds Keras models itself in this environment: to count the
# FLOPs of the user's own models (dlbench.run.flops_count) and to draw the
# shared initial weights (dlbench.run.shared_weights), whichever backends run.
KERAS_ON_TORCH = matrix.KERAS_ON_TORCH
# The GPU's probe runs in keras-torch's CUDA environment.
TORCH_ON_GPUS = catalog.BACKENDS[KERAS_ON_TORCH].environment(1, "gpu")
# More of cpu_exclusive than any machine provides: Snakemake caps a job's
# resource at the amount --resources gives, so a job asking for this takes
# the whole amount, whatever it is.
WHOLE_CPU = 1_000_000
# A venv build or a data preparation takes one unit: with the two that
# profiles/default provides, two of them share the CPU, never a timed run.
SETUP_SHARE = 1
ENV_MODES = ("venv", "conda", "existing", "current")


class TargetsBase(object):
    """The targets of one validated config (whose ``machine`` is already
    resolved): ``basedir`` is the workflow's folder, ``env_mode`` the
    environments' mode (venv or conda: the config's, or Snakemake's
    deployment method under ``auto``)."""

    def __init__(self, config, basedir, env_mode):
        self.config = config
        self.basedir = Path(basedir)
        self.src = os.path.relpath(self.basedir / "src")
        self.package = Path(self.src) / "dlbench"
        self.env_mode = env_mode
        self.machine = config["machine"]
        self.registry = config_registry.registry_of(config)
        self.runs = matrix.runs(config)
        self.check_runs = comparisons.check_runs(config)
        self.workloads = [(w["dataset"], w["model"], w["task"]) for w in config["workloads"]]
        self._entries = {(w["dataset"], w["model"]): w for w in config["workloads"]}

    def workload(self, dataset, model):
        """The config's entry of a workload (matrix.workload, by lookup)."""
        return self._entries[(dataset, model)]

    def code(self, module):
        """A library module's file (``run/probe``), relative."""
        return str(self.package / (module + ".py"))

    def run_of(self, wildcards):
        return matrix.Run(
            wildcards.dataset,
            wildcards.model,
            wildcards.backend,
            **{d.name: d.parse(getattr(wildcards, d.name)) for d in matrix.DIMENSIONS},
            repeat=int(wildcards.rep),
            machine=wildcards.machine,
        )

    def run_environment(self, wildcards):
        """The backend's CPU environment, or its CUDA one on GPUs, of the
        run's version variant."""
        return run_spec.run_environment(self.config, self.run_of(wildcards))

    def environment_mode(self, environment):
        """existing where the config names an interpreter for the environment or
        its backend, else the workflow's mode."""
        if run_spec.existing_python(self.config, environment):
            return "existing"
        return self.env_mode

    def environment_marker(self, environment):
        """The file a run of this environment waits for: the built venv's
        marker, or the existing interpreter's check; none under conda."""
        mode = self.environment_mode(environment)
        if mode == "venv":
            return f".venvs/{environment}/ready.json"
        if mode == "existing":
            return f"results/environments/{environment}.json"
        return None

    def interpreter_available(self, environment):
        """False only where it is an existing interpreter the config does not name."""
        named = run_spec.existing_python(self.config, environment)
        return self.environment_mode(environment) != "existing" or bool(named)

    def environment_python(self, environment):
        """The interpreter of an environment in its mode."""
        return {
            "venv": f".venvs/{environment}/bin/python",
            "conda": "python",
            "existing": run_spec.existing_python(self.config, environment),
            "current": sys.executable,
        }[self.environment_mode(environment)]

    def keras_on_torch_available(self):
        return self.interpreter_available(KERAS_ON_TORCH)

    def keras_on_torch_python(self):
        return self.environment_python(KERAS_ON_TORCH)

    def timed_on_gpus(self, wildcards):
        return int(wildcards.devices) > 0 and self.config["accelerator"] == "gpu"

    def data_files(self):
        """Every raw and prepared data file of the configured datasets."""
        return list(self.data_files_by_dataset())

    def data_files_by_dataset(self):
        """{raw or prepared data file: its dataset}, of the configured datasets."""
        found = {}
        for dataset in sorted({entry["dataset"] for entry in self.config["workloads"]}):
            for filename in self.registry.datasets[dataset]["files"]:
                found[f"resources/{dataset}/{filename}"] = dataset
            found[f"results/data/{dataset}.npz"] = dataset
        return found

    def record_folders(self, dataset):
        """The folders of this machine's run and check records of ``dataset``."""
        return [
            folder.split("{model}")[0].format(machine=self.machine, dataset=dataset)
            for folder in (paths.RUN_DIR, paths.CHECK_DIR)
        ]
