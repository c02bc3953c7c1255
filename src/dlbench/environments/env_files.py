"""Reading a backend's env file, ``envs/<backend>.yaml``, without conda.

The conda spec is the single source of truth: its ``python=X.Y`` pin picks the
interpreter and its ``pip:`` list is installed into ``.venvs/<backend>``; a
version variant (dlbench.environments.variants) replaces some of the pins.
"""

import re
from pathlib import Path

import yaml

from dlbench.environments import variants


class EnvironmentBuildError(RuntimeError):
    """An environment that cannot be built, with what is missing."""


def read_spec(path, variant=None):
    """An env file's python and pip pins; with ``variant`` ({distribution:
    version}, dlbench.environments.variants), those versions instead."""
    with open(path) as handle:
        spec = yaml.safe_load(handle)
    python, pip_version, pip = None, None, []
    for dependency in spec.get("dependencies", []):
        if isinstance(dependency, dict):
            pip.extend(dependency.get("pip", []))
            continue
        match = re.match(r"^(python|pip)\s*=+\s*(\d+\.\d+(?:\.\d+)?)", str(dependency))
        if match and match.group(1) == "python":
            python = ".".join(match.group(2).split(".")[:2])
        elif match:
            pip_version = match.group(2)
    if python is None:
        raise EnvironmentBuildError("{}: no 'python=X.Y' pin among its dependencies".format(path))
    return {
        "name": spec.get("name", Path(path).stem),
        "python": python,
        "pip_version": pip_version,
        "pip": variants.apply(pip, variant) if variant else pip,
        "variant": dict(variant or {}),
    }


def variant_env_file(path, variant):
    """An env file's text with a version variant's pins in its pip list."""
    with open(path) as handle:
        spec = yaml.safe_load(handle)
    for dependency in spec.get("dependencies", []):
        if isinstance(dependency, dict) and "pip" in dependency:
            dependency["pip"] = variants.apply(dependency["pip"], variant)
    header = "# {} with {} (generated from it; the config's versions)\n".format(
        Path(path).name, variants.label(variant)
    )
    return header + yaml.safe_dump(spec, sort_keys=False)


def pins(spec):
    """The pip requirements of a spec (``read_spec``), option lines left out."""
    from packaging.requirements import Requirement

    return [Requirement(line) for line in spec["pip"] if not line.strip().startswith("-")]
