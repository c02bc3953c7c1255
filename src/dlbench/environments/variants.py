"""Framework versions as a dimension of the matrix: a backend's variants of
its env file. The env file stays the single source of truth for the default
(``pinned``); a variant names only what differs from it, as
{distribution: version} in the config's ``versions``, and is named by what it
installs (``jax-0.9.2+jaxlib-0.9.2``). Each variant is an environment of its
own (``keras-jax@jax-0.9.2+jaxlib-0.9.2``), built the same three ways as the
default: conda, a venv, or an existing interpreter the config names."""

import re

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

PINNED = "pinned"
SEPARATOR = "@"
# What a variant's name may hold: it is a folder name and a wildcard value.
LABEL_PATTERN = r"pinned|[a-z0-9][a-z0-9._-]*(?:\+[a-z0-9][a-z0-9._-]*)*"


class VariantError(ValueError):
    """A variant that names no distribution or no exact version."""


def label(pins):
    """The variant's name: its distributions (extras left out) and versions,
    sorted, ``name-version`` joined by ``+``."""
    if not pins:
        raise VariantError("a version variant names at least one distribution")
    parts = []
    for name, version in pins.items():
        version = str(version)
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9.+!_-]*$", version):
            raise VariantError("{}: {!r} is not an exact version".format(name, version))
        parts.append("{}-{}".format(canonicalize_name(_requirement(name).name), version.lower()))
    return "+".join(sorted(parts))


def _requirement(text):
    try:
        return Requirement(text)
    except InvalidRequirement as error:
        raise VariantError("{!r} is not a distribution's name: {}".format(text, error)) from None


def variants_of(config, backend):
    """{name: pins} of the backend's variants in the config, pinned first."""
    found = {PINNED: {}}
    for pins in (config.get("versions") or {}).get(backend, []):
        found[label(pins)] = dict(pins)
    return found


def environment_name(environment, version):
    """``keras-jax`` for the pinned default, ``keras-jax@<variant>`` otherwise."""
    return environment if version == PINNED else environment + SEPARATOR + version


def split(environment):
    """(the env file's environment, the variant): the inverse of environment_name."""
    base, _, version = environment.partition(SEPARATOR)
    return base, version or PINNED


def apply(pip_lines, pins):
    """An env file's pip lines with the variant's versions: a named
    distribution's pin replaced (its extras and markers kept), one the file
    does not pin added."""
    wanted = {
        canonicalize_name(_requirement(name).name): (name, str(version))
        for name, version in pins.items()
    }
    lines = []
    for line in pip_lines:
        stripped = line.strip()
        if stripped.startswith("-"):
            lines.append(line)
            continue
        requirement = Requirement(stripped)
        key = canonicalize_name(requirement.name)
        if key in wanted:
            _, version = wanted.pop(key)
            extras = ",".join(sorted(requirement.extras))
            extras = "[{}]".format(extras) if extras else ""
            marker = "; {}".format(requirement.marker) if requirement.marker else ""
            line = "{}{}=={}{}".format(requirement.name, extras, version, marker)
        lines.append(line)
    for name, version in wanted.values():
        lines.append("{}=={}".format(name, version))
    return lines
