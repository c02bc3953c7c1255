"""workflow/rules/data.smk: downloads, prepared data, the shared weights, a user's model's check."""

import json
import os
import shlex

from dlbench import catalog
from dlbench.plan import paths
from dlbench.plan.targets.common import KERAS_ON_TORCH, TargetsBase


class DataTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/data.smk's rules."""

    def keras_model_inputs(self, wildcards):
        """The prepared data, the Keras definition of the model (a user's file,
        or the workload's folder and the shared Keras layers) and the
        environment that builds it."""
        inputs = {
            "data": f"results/data/{wildcards.dataset}.npz",
            "model": os.path.relpath(self.registry.source(wildcards.model, "keras")),
        }
        if not self.registry.is_custom(wildcards.model):
            inputs["facts"] = self.code(f"models/workloads/{wildcards.model}/__init__")
            inputs["layers"] = self.code("models/layers/keras_layers")
        marker = self.environment_marker(KERAS_ON_TORCH)
        if marker:
            inputs["env"] = marker
        return inputs

    def initial_weights_inputs(self, wildcards):
        # the script and the draws it makes (the initialisers' numpy draws)
        code = [self.code("run/shared_weights"), self.code("models/initial_weights")]
        return dict(
            self.keras_model_inputs(wildcards), code=code, **self.model_check_input(wildcards)
        )

    def model_check_inputs(self, wildcards):
        return dict(self.keras_model_inputs(wildcards), code=self.code("run/model_check"))

    def model_check_input(self, wildcards):
        """A model of the user's: its check (rule check_custom_model), before
        anything builds it."""
        if not self.registry.is_custom(wildcards.model):
            return {}
        return {"model_check": f"results/models/{wildcards.dataset}/{wildcards.model}.json"}

    def trained_weights_inputs(self, wildcards):
        """The draw the training starts from, the data, and the code that
        trains: Keras' family digest (harness, adapter, layers) and the
        training's own module."""
        return dict(
            self.keras_model_inputs(wildcards),
            drawn=paths.WEIGHTS.format(**wildcards),
            family="results/code/keras.sha256",
            code=self.code("run/trained_weights"),
        )

    def trained_weights_settings(self, wildcards):
        """How an inference workload's weights are trained: its trained_weights."""
        entry = self.workload(wildcards.dataset, wildcards.model)
        return json.dumps(entry["trained_weights"], sort_keys=True)

    def custom_model_option(self, wildcards):
        """``--custom JSON`` for a model of the user's, nothing for a built-in one."""
        entry = self.config["custom_models"].get(wildcards.model)
        if entry is None:
            return ""
        return f"--custom {shlex.quote(json.dumps(entry, sort_keys=True))}"

    def model_check_option(self, wildcards, input):
        """``--model-check PATH`` where the job's inputs hold a model check."""
        if "model_check" not in input.keys():
            return ""
        return f"--model-check {shlex.quote(input.model_check)}"

    def prepare_inputs(self, wildcards):
        """The verified raw files by name (a dataset of the user's: every file
        it reads, under ``own``), and the preparation code: a change to a file
        or to how data is prepared re-makes the prepared file (and the runs on it)."""
        entry = self.registry.datasets[wildcards.dataset]
        if catalog.OWN in entry:
            modules = ["own_preparation", "own_datasets", "npz_writer", "raw_formats"]
            return {
                "own": list(entry[catalog.OWN]["files"]),
                "code": [self.code(f"data/{module}") for module in modules],
            }
        inputs = {name: f"resources/{wildcards.dataset}/{name}" for name in entry["files"]}
        inputs["code"] = [self.code("data/preparation"), self.code("data/raw_formats")]
        return inputs

    def dataset_definition(self, wildcards):
        """The config's own definition of a dataset (synthetic_datasets,
        own_datasets), or None: changing it re-makes the prepared file."""
        for part in ("synthetic_datasets", "own_datasets"):
            if wildcards.dataset in self.config[part]:
                return self.config[part][wildcards.dataset]
        return None

    def raw_source(self, wildcards):
        return catalog.source_of(wildcards.dataset, wildcards.filename, self.config["data_mirror"])

    def known_hash(self, wildcards):
        return catalog.DATASETS[wildcards.dataset]["files"][wildcards.filename]

    def hash_record(self, wildcards):
        """Where the checksum of a file without a published one is recorded on
        first download; outside the download's output, so it outlives the file."""
        return f"resources/checksums/{wildcards.dataset}/{wildcards.filename}.sha256"
