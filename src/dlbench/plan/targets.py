"""What the workflow plans, as functions of the config: the targets, each
rule's inputs and parameters, the environments and interpreters, the code
digests' files. workflow/rules/common.smk makes one ``Plan`` from the
validated config and the rules call its methods (input functions take the
job's wildcards: any object with the wildcards as attributes).

Paths are relative to the working directory, as Snakemake keeps them: an
output's set of input paths that were absolute made a copied or moved
workflow folder re-run everything."""

import functools
import hashlib
import json
import math
import os
import shlex
import sys
from pathlib import Path

from dlbench import catalog
from dlbench.environments import envspec, variants
from dlbench.models import lines, workloads
from dlbench.plan import comparisons, import_graph, matrix, paths, run_spec
from dlbench.registry import Registry

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


class Plan(object):
    """The workflow's plan of one validated config (whose ``machine`` is
    already resolved): ``basedir`` is the workflow's folder, ``env_mode``
    the environments' mode (venv or conda: the config's, or Snakemake's
    deployment method under ``auto``)."""

    def __init__(self, config, basedir, env_mode):
        self.config = config
        self.basedir = Path(basedir)
        self.src = os.path.relpath(self.basedir / "src")
        self.package = Path(self.src) / "dlbench"
        self.env_mode = env_mode
        self.machine = config["machine"]
        self.registry = Registry.of_config(config)
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

    def env_file(self, environment):
        """The env file conda builds the environment from: envs/<environment>.yaml,
        or for a version variant that file with the variant's pins, written
        beside Snakemake's own files (conda reads a file)."""
        base, version = variants.split(environment)
        source = self.basedir / "envs" / f"{base}.yaml"
        if version == variants.PINNED:
            return str(source)
        written = Path(".snakemake") / "dlbench" / "envs" / f"{environment}.yaml"
        text = envspec.variant_env_file(source, self.env_variant_pins(environment))
        if not written.exists() or written.read_text() != text:
            written.parent.mkdir(parents=True, exist_ok=True)
            written.write_text(text)
        return str(written.resolve())

    def env_variant_pins(self, environment):
        """{distribution: version} of an environment's version variant ({} pinned)."""
        base, version = variants.split(environment)
        backend = catalog.backend_of_environment(base)
        return variants.variants_of(self.config, backend).get(version, {})

    def env_variant(self, wildcards):
        """The variant's pins as the venv and check rules' parameter (JSON)."""
        return json.dumps(self.env_variant_pins(wildcards.environment), sort_keys=True)

    def environment_mode(self, environment):
        """existing where the config names an interpreter for the environment or
        its backend, else the workflow's mode."""
        if run_spec.existing_python(self.config, environment):
            return "existing"
        return self.env_mode

    def env_spec_path(self, wildcards):
        """The env file (a variant's is its backend's), relative: a moved
        workflow rebuilds nothing."""
        base, _ = variants.split(wildcards.environment)
        return os.path.relpath(self.basedir / "envs" / f"{base}.yaml")

    def env_identity(self, wildcards):
        """What the env file installs with the variant's versions (comments
        and layout left out): a build or check follows a change of this, not
        the file's time stamp."""
        variant = self.env_variant_pins(wildcards.environment)
        return envspec.identity(self.env_spec_path(wildcards), variant)

    def existing_interpreter(self, wildcards):
        return run_spec.existing_python(self.config, wildcards.environment)

    def existing_fingerprint(self, wildcards):
        """Installing or removing a package in an existing interpreter checks it again."""
        return envspec.interpreter_fingerprint(self.existing_interpreter(wildcards))

    def environment_marker(self, environment):
        """The file a run of this environment waits for: the built venv's
        marker, or the existing interpreter's check; none under conda."""
        mode = self.environment_mode(environment)
        if mode == "venv":
            return f".venvs/{environment}/ready.json"
        if mode == "existing":
            return f"results/environments/{environment}.json"
        return None

    def run_of(self, wildcards):
        return matrix.Run(
            wildcards.dataset,
            wildcards.model,
            wildcards.backend,
            **{d.name: d.parse(getattr(wildcards, d.name)) for d in matrix.DIMENSIONS},
            repeat=int(wildcards.rep),
            machine=wildcards.machine,
        )

    def bench_threads(self, wildcards):
        """The run's CPU threads (Snakemake caps a job's threads at --cores when
        it runs locally)."""
        threads = wildcards.threads
        return os.cpu_count() if threads == "all" else int(threads)

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

    def run_records(self):
        return [f"{paths.run_dir(run)}/run.json" for run in self.runs]

    def import_sources(self):
        """The imported results folders and archives, as given."""
        return list(self.config["import_results"])

    def import_fingerprint(self):
        """What the imported folders hold (each record's path, size and time):
        a record added or changed inside a folder, whose own time may not change,
        imports again."""
        found = []
        for source in map(Path, self.config["import_results"]):
            if source.is_dir():
                for path in sorted(source.rglob("run.json")):
                    status = path.stat()
                    found.append(f"{path}:{status.st_size}:{status.st_mtime_ns}")
        return hashlib.sha256("\n".join(found).encode()).hexdigest()

    def accuracy_tolerances(self):
        """Accuracy parity is judged on every workload but those on random labels."""
        return {
            (entry["dataset"], entry["model"]): matrix.accuracy_tolerance(self.config, entry)
            for entry in self.config["workloads"]
            if not self.registry.speed_only(entry["dataset"])
        }

    def all_outputs(self):
        """The tables and plots, and every run record: Snakemake re-makes a
        missing target, not a missing intermediate file, so a deleted or never
        finished record is run again only as a target."""
        outputs = self.run_records() + ["results/metrics.csv", "results/summary.csv"]
        for entry in self.config["workloads"]:
            dataset, model = entry["dataset"], entry["model"]
            outputs.append(f"results/tables/{dataset}_{model}.md")
            outputs += [
                f"results/plots/{dataset}_{model}_{plot}.png"
                for plot in matrix.plots(self.config, entry)
            ]
        outputs += ["results/tables/lines_of_code.md", "results/plots/lines_of_code.png"]
        outputs += [
            "results/tables/machines.md",
            "results/tables/machine_interaction.md",
            "results/tables/significance.md",
            "results/tables/environment.md",
            "results/tables/manifest.md",
            "results/plots/relative_speed.png",
            "results/tables/published_comparison.md",
            "results/plots/published_comparison.png",
            "results/tables/utilisation.md",
            "results/plots/utilisation.png",
            "results/tables/cold_start.md",
            "results/plots/cold_start.png",
        ]
        if self.check_records():
            outputs.append("results/tables/equivalence.md")
        if comparisons.predictions_compared(self.config):
            outputs.append("results/tables/predictions.md")
        if comparisons.versions_compared(self.config):
            outputs += ["results/tables/versions.md", "results/plots/versions.png"]
        if comparisons.modes_compared(self.config):
            outputs += ["results/tables/speedups.md", "results/plots/speedups.png"]
        if catalog.keras_native_pairs(set(self.config["backends"])):
            outputs += [
                "results/tables/abstraction_cost.md",
                "results/plots/abstraction_cost.png",
            ]
        return outputs

    def versions_environments(self):
        """{environment: its marker} of every environment whose versions the
        versions table may set against another's: a backend's run on more than
        its pinned versions; every backend's where other machines' records are
        imported."""
        found = {}
        every = bool(self.config.get("import_results"))
        for environment in sorted({run_spec.run_environment(self.config, r) for r in self.runs}):
            backend = catalog.backend_of_environment(variants.split(environment)[0])
            marker = self.environment_marker(environment)
            if marker and (every or len(variants.variants_of(self.config, backend)) > 1):
                found[environment] = marker
        return found

    def workload_data(self):
        """The prepared dataset of every configured workload, in config order."""
        return [f"results/data/{dataset}.npz" for dataset, _, _ in self.workloads]

    def implementations(self):
        """(dataset, model, task, backend) of every implementation the config
        runs somewhere, for the lines-of-code table."""
        return [
            (entry["dataset"], entry["model"], entry["task"], backend)
            for entry in self.config["workloads"]
            for backend in matrix.runnable_backends(self.config, entry)
        ]

    def implementation_sources(self):
        """The source files whose lines are counted, and the counter itself."""
        files = {Path(self.code("models/lines"))}
        files |= set((self.package / "models" / "layers").glob("*.py"))
        for _, model, _, backend in self.implementations():
            files.update(
                Path(os.path.relpath(p)) for p in lines.source_files(backend, model, self.registry)
            )
        return sorted(str(path) for path in files)

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
            f"results/probes/{self.machine}/threads={threads}/precision={precision}.json"
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
            f"results/probes/{self.machine}/gpu/precision={precision}.json"
            for precision in matrix.every_dimension_value(self.config, "precision")
        ]

    def flops_count_inputs(self, wildcards):
        code = self.code("run/flops_count")
        return dict(
            self.keras_model_inputs(wildcards), code=code, **self.model_check_input(wildcards)
        )

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
        """The verified raw files by name, and the preparation code: a change to
        how data is prepared re-makes the prepared file (and the runs on it)."""
        files = self.registry.datasets[wildcards.dataset]["files"]
        inputs = {name: f"resources/{wildcards.dataset}/{name}" for name in files}
        inputs["code"] = self.code("data/datasets")
        return inputs

    def raw_source(self, wildcards):
        return catalog.source_of(wildcards.dataset, wildcards.filename, self.config["data_mirror"])

    def known_hash(self, wildcards):
        return catalog.DATASETS[wildcards.dataset]["files"][wildcards.filename]

    def hash_record(self, wildcards):
        """Where the checksum of a file without a published one is recorded on
        first download; outside the download's output, so it outlives the file."""
        return f"resources/checksums/{wildcards.dataset}/{wildcards.filename}.sha256"

    def run_spec(self, wildcards):
        return json.dumps(run_spec.spec(self.config, self.run_of(wildcards)), sort_keys=True)

    def check_spec(self, wildcards):
        return json.dumps(run_spec.check_spec(self.config, self.run_of(wildcards)), sort_keys=True)

    def run_environment(self, wildcards):
        """The backend's CPU environment, or its CUDA one on GPUs, of the
        run's version variant."""
        return run_spec.run_environment(self.config, self.run_of(wildcards))

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

    def timed_on_gpus(self, wildcards):
        return int(wildcards.devices) > 0 and self.config["accelerator"] == "gpu"

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

    def gpu_lock_dir(self, wildcards):
        """The folder of GPU claims that other users' jobs share, quoted."""
        return shlex.quote(self.config["gpu_lock_dir"] or "")

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
    adapters = sorted(
        {
            "{}.{}_adapter".format(import_graph.ADAPTERS_PACKAGE, entry.adapter)
            for entry in catalog.BACKENDS.values()
            if entry["family"] == family
        }
    )
    package = import_graph.PACKAGE
    files = set(import_graph.run_core())
    files |= {str(path.relative_to(package)) for path in import_graph.closure(adapters)}
    for model in workloads.built_in():
        files.add(f"models/workloads/{model}/__init__.py")
        if family in workloads.families(model):
            files.add(f"models/workloads/{model}/in_{family}.py")
    return tuple(sorted(files))
