"""workflow/rules/compare.smk: the versions compared and the lines of code counted."""

import os
from pathlib import Path

from dlbench import catalog
from dlbench.environments import variants
from dlbench.models import lines
from dlbench.plan import matrix, run_spec
from dlbench.plan.targets.common import TargetsBase


class CompareTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/compare.smk's rules."""

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

    def implementations(self):
        """(dataset, model, task, backend) of every implementation the config
        runs somewhere, for the lines-of-code table, and of the backends that
        compute on GPUs only (native-cudnn's LeNet, the lowest level of the
        comparison the table reproduces): counting their code needs no GPU."""
        found = []
        for entry in self.config["workloads"]:
            backends = matrix.runnable_backends(self.config, entry)
            backends += [
                name
                for name, backend in catalog.BACKENDS.items()
                if "gpu_only" in backend
                and name not in backends
                and backend.task_not_applicable(entry["task"]) is None
                and self.registry.implemented(entry["model"], backend["family"])
            ]
            found += [(entry["dataset"], entry["model"], entry["task"], b) for b in backends]
        return found

    def implementation_sources(self):
        """The source files whose lines are counted, and the counter itself."""
        files = {Path(self.code("models/lines"))}
        files |= set((self.package / "models" / "layers").glob("*.py"))
        for _, model, _, backend in self.implementations():
            files.update(
                Path(os.path.relpath(p)) for p in lines.source_files(backend, model, self.registry)
            )
        return sorted(str(path) for path in files)
