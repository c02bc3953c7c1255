"""workflow/rules/bench.smk: a run's spec, inputs, interpreter, resources and supervisor."""

import functools
import json
import math
import os
import shlex
import sys

from dlbench import catalog
from dlbench.models import workloads
from dlbench.plan import import_graph, matrix, run_spec
from dlbench.plan.targets.common import (
    SETUP_SHARE,
    WHOLE_CPU,
    TargetsBase,
)


class BenchTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/bench.smk's rules."""

    def bench_threads(self, wildcards):
        """The run's CPU threads (Snakemake caps a job's threads at --cores when
        it runs locally)."""
        threads = wildcards.threads
        return os.cpu_count() if threads == "all" else int(threads)

    def run_spec(self, wildcards):
        spec = run_spec.spec(self.config, self.run_of(wildcards))
        return json.dumps(spec.as_json(), sort_keys=True)

    def run_env_file(self, wildcards):
        """The conda env of a run; none where it runs in an existing interpreter."""
        environment = self.run_environment(wildcards)
        if self.environment_mode(environment) == "existing":
            return None
        return self.env_file(environment)

    def bench_inputs(self, wildcards):
        """The prepared data, the digest of the code the run executes and, in
        venv mode, the run's venv: a change to any re-runs the run."""
        family = catalog.BACKENDS[wildcards.backend]["family"]
        inputs = {
            "data": f"results/data/{wildcards.dataset}.npz",
            "code": f"results/code/{family}.sha256",
        }
        marker = self.environment_marker(self.run_environment(wildcards))
        if marker:
            inputs["env"] = marker
        if self.registry.is_custom(wildcards.model):
            inputs["model"] = os.path.relpath(self.registry.source(wildcards.model, family))
            inputs.update(self.model_check_input(wildcards))
        weights = run_spec.initial_weights_entry(
            self.config,
            self.workload(wildcards.dataset, wildcards.model),
            self.run_of(wildcards),
        )
        if weights:
            inputs["weights"] = weights["initial_weights"]
        return inputs

    def backend_python(self, wildcards):
        return self.environment_python(self.run_environment(wildcards))

    def family_sources(self, wildcards):
        """The library files a run of this family executes (the code
        digest's): what every run executes (import_graph.run_core: run/ and
        what it imports), the family's adapters with what they import (its
        layers), and its implementations of the workloads with the
        workloads' own facts."""
        return [str(self.package / name) for name in _family_files(wildcards.family)]

    def cpu_exclusive(self, wildcards):
        """CPU-timed runs (emulated devices too) take the whole CPU, unless the
        config lets them overlap: then one unit each, so that the machine's
        probe (rule cpu_probe, the whole CPU) never measures beside them."""
        if self.timed_on_gpus(wildcards):
            return 0
        return SETUP_SHARE if self.config["concurrent_cpu_runs"] else WHOLE_CPU

    @staticmethod
    def compile_cache_share(cache):
        """The job's unit of the resource ``<cache>_compile_cache``, of which
        the profiles provide one: its backend compiles ops into that cache
        (catalog ``compile_cache``). A second such job would wait on the
        cache's lock while the first compiles; Snakemake runs another job in
        its place instead."""

        def share(wildcards):
            return int(catalog.BACKENDS[wildcards.backend].get("compile_cache") == cache)

        return share

    def gpus_of_run(self, wildcards):
        """The run's GPUs as a resource: `--resources gpu=N` locally, the job's
        GPU request on a cluster. The ids come from the supervisor (gpus.py)."""
        return int(wildcards.devices) if self.timed_on_gpus(wildcards) else 0

    def supervisor_python(self, wildcards):
        """The supervisor needs only the library: in venv mode it runs in this
        environment, so that a backend whose venv could not be built still gets
        a record saying why."""
        in_conda_env = self.environment_mode(self.run_environment(wildcards)) == "conda"
        return "python" if in_conda_env else sys.executable

    def run_timeout_minutes(self, wildcards):
        """The workload's own time-out, or the config's."""
        entry = self.workload(wildcards.dataset, wildcards.model)
        return matrix.timeout_minutes(self.config, entry)

    def run_runtime(self, wildcards):
        """The job's runtime resource: the run's time-out, rounded up."""
        return math.ceil(self.run_timeout_minutes(wildcards))

    def supervisor_options(self, wildcards, input):
        options = f"--timeout-minutes {self.run_timeout_minutes(wildcards)} "
        if self.config["memory_limit_mb"]:
            options += f"--memory-limit-mb {self.config['memory_limit_mb']} "
        options += f"--env-mode {self.environment_mode(self.run_environment(wildcards))} "
        if "env" in input.keys():
            options += f"--env-marker {shlex.quote(input.env)} "
        if "model_check" in input.keys():
            options += self.model_check_option(wildcards, input) + " "
        if self.timed_on_gpus(wildcards):
            options += f"--gpu-wait-minutes {self.config['gpu_wait_minutes']} "
            if self.config["gpu_lock_dir"]:
                options += f"--gpu-lock-dir {shlex.quote(self.config['gpu_lock_dir'])} "
        return options


@functools.lru_cache(maxsize=None)
def _family_files(family):
    """The package's files a run of ``family`` executes, relative to it:
    computed once per workflow, not once per job."""
    members = [entry for entry in catalog.BACKENDS.values() if entry["family"] == family]
    adapters = {
        "{}.{}_adapter".format(import_graph.ADAPTERS_PACKAGE, entry.adapter) for entry in members
    }
    profilers = {
        "{}.in_{}".format(import_graph.OP_PROFILERS_PACKAGE, entry["framework"])
        for entry in members
    }
    known = set(import_graph.under(import_graph.OP_PROFILERS_PACKAGE))
    package = import_graph.PACKAGE
    files = set(import_graph.run_core())
    found = import_graph.closure(sorted(adapters | (profilers & known)))
    files |= {str(path.relative_to(package)) for path in found}
    for model in workloads.built_in():
        files.add(f"models/workloads/{model}/__init__.py")
        if family in workloads.families(model):
            files.add(f"models/workloads/{model}/in_{family}.py")
    return tuple(sorted(files))
