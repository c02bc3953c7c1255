"""workflow/rules/envs.smk: the environments' env files, variants and checks."""

import json
import os
from pathlib import Path

from dlbench import catalog
from dlbench.environments import checks, env_files, variants, venvs
from dlbench.plan import run_spec
from dlbench.plan.targets.common import TargetsBase


class EnvsTargets(TargetsBase):
    """The inputs and parameters of workflow/rules/envs.smk's rules."""

    def env_file(self, environment):
        """The env file conda builds the environment from: envs/<environment>.yaml,
        or for a version variant that file with the variant's pins, written
        beside Snakemake's own files (conda reads a file)."""
        base, version = variants.split(environment)
        source = self.basedir / "envs" / f"{base}.yaml"
        if version == variants.PINNED:
            return str(source)
        written = Path(".snakemake") / "dlbench" / "envs" / f"{environment}.yaml"
        text = env_files.variant_env_file(source, self.env_variant_pins(environment))
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
        return venvs.identity(self.env_spec_path(wildcards), variant)

    def existing_interpreter(self, wildcards):
        return run_spec.existing_python(self.config, wildcards.environment)

    def existing_fingerprint(self, wildcards):
        """Installing or removing a package in an existing interpreter checks it again."""
        return checks.interpreter_fingerprint(self.existing_interpreter(wildcards))
