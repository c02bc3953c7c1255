"""``newest`` as a version: a config's ``versions`` may name the newest
release of a backend's framework on the package index, and the workflow
resolves it at planning into exact versions, a variant like any other
(dlbench.environments.variants).

- ``newest`` alone stands for the backend's framework distributions
  (``FRAMEWORK_DISTRIBUTIONS``: jax and jaxlib together, torch, ...); in a
  variant, ``{keras: newest}`` asks for Keras' newest too. ``pinned`` is the
  env file's own, which always runs.
- The index is asked through pip (``pip index versions``), as the env file
  would install: its index options, releases for its Python, the same kind of
  build (a pin with a local label, ``2.13.0+cpu``, takes only releases with
  that label: another build of torch brings its CUDA libraries).
- Where the newest release is the pin, the release before it runs instead
  (and the line printed says so), so that ``newest`` always makes a pair.
- The resolution is kept in ``RESOLVED`` (resources/versions/newest.json):
  a later invocation compares the same release until ``refresh_newest``
  asks the index again. Every release resolved before stays a variant, so
  the releases of one framework build up a series on this machine.
- Without an answer from the index it says so in one line and plans the
  pinned versions alone.
"""

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from dlbench import catalog
from dlbench.environments import env_files, variants

NEWEST = "newest"
RESOLVED = Path("resources") / "versions" / "newest.json"
# The distributions that are a framework, by the catalog's framework name:
# those of them an env file pins move together.
FRAMEWORK_DISTRIBUTIONS = {
    "jax": ("jax", "jaxlib"),
    "torch": ("torch",),
    "tensorflow": ("tensorflow", "tensorflow-cpu"),
    "openvino": ("openvino",),
    "mxnet": ("mxnet", "mxnet-mkl"),
    "theano": ("theano",),
    "cntk": ("cntk",),
    "chainer": ("chainer",),
    "pytensor": ("pytensor",),
    "cudnn": ("cupy-cuda13x",),
}
# pip's options that say where it installs from, as an env file's pip list gives them
INDEX_OPTIONS = ("--index-url", "--extra-index-url", "--find-links", "-i", "-f")

Versions = Callable[[str, str, List[str]], Tuple[Optional[List[str]], str]]


def _is_word(item) -> bool:
    """An item of a backend's versions that this module replaces: ``newest``
    or ``pinned``, or a variant that names a version ``newest``."""
    return isinstance(item, str) or NEWEST in item.values()


def index_versions(name: str, python: str, options: List[str]) -> Tuple[Optional[List[str]], str]:
    """(the releases of ``name`` pip finds for Python ``python``, newest
    first: wheels for it, and sources that do not say they need another; or
    None and pip's last line where it found none)."""
    command = [sys.executable, "-m", "pip", "index", "versions", name, "--python-version", python]
    command += ["--disable-pip-version-check", "--retries", "0"]
    command += ["--timeout", "15", *options]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "pip asked the index for two minutes without an answer"
    for line in done.stdout.splitlines():
        if line.startswith("Available versions:"):
            return [v.strip() for v in line.split(":", 1)[1].split(",") if v.strip()], ""
    said = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
    return None, said[-1].strip() if said else "pip exited with status {}".format(done.returncode)


def _version(text):
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _local(version):
    return version.local if version is not None else None


def choose(found: Dict[str, List[str]], pinned: Dict[str, str]) -> Tuple[Dict[str, str], str]:
    """The release to run for distributions that move together: the newest
    version every one of them has (of the pin's own build: the same local
    label), or the newest before the pins where that is the pins; and why.
    ``found``: {distribution: its releases}; ``pinned``: {distribution: the
    env file's version (None: not pinned)}."""
    common = None
    for name, releases in found.items():
        pin = _version(pinned.get(name) or "")
        kept = {
            str(v)
            for v in map(_version, releases)
            if v is not None and not v.is_prerelease and _local(v) == _local(pin)
        }
        common = kept if common is None else common & kept
    if not common:
        return {}, "no release that {} all have".format(" and ".join(sorted(found)))
    ordered = sorted(common, key=Version)
    newest = ordered[-1]
    pins = [_version(pinned.get(name) or "") for name in found]
    if all(pin is not None and pin == Version(newest) for pin in pins):
        earlier = [v for v in ordered if Version(v) < Version(newest)]
        if not earlier:
            return (
                {},
                "the newest release, {}, is the pin, and the index has none before it".format(
                    newest
                ),
            )
        return (
            {name: earlier[-1] for name in found},
            "the newest release, {}, is the pin: the release before it instead".format(newest),
        )
    return {name: newest for name in found}, "the newest release"


def _env_spec(envs_dir, backend):
    spec = env_files.read_spec(Path(envs_dir) / "{}.yaml".format(backend))
    options = []
    for line in spec["pip"]:
        words = line.split()
        if words and words[0] in INDEX_OPTIONS:
            options += words[:2]
    pinned = {}
    for requirement in env_files.pins(spec):
        exact = [s.version for s in requirement.specifier if s.operator == "=="]
        pinned[canonicalize_name(requirement.name)] = (
            str(requirement),
            exact[0] if exact else None,
        )
    return spec["python"], options, pinned


def _asked(backend, item, envs_dir):
    """{distribution as the env file names it: the version asked} of one
    item of a backend's versions (``newest`` expanded)."""
    _, _, pinned = _env_spec(envs_dir, backend)
    if item == NEWEST:
        framework = catalog.BACKENDS[backend]["framework"]
        names = [n for n in FRAMEWORK_DISTRIBUTIONS.get(framework, ()) if n in pinned]
        if not names:
            raise ValueError(
                "versions.{}: newest: its env file pins none of {}'s distributions ({})".format(
                    backend, framework, ", ".join(FRAMEWORK_DISTRIBUTIONS.get(framework, ()))
                )
            )
        return {Requirement(pinned[n][0]).name + _extras(pinned[n][0]): NEWEST for n in names}
    return dict(item)


def _extras(requirement):
    extras = sorted(Requirement(requirement).extras)
    return "[{}]".format(",".join(extras)) if extras else ""


def resolve(
    config: Dict[str, Any],
    envs_dir,
    path=RESOLVED,
    refresh: bool = False,
    ask: Versions = index_versions,
    say: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> None:
    """Replace every ``newest`` in the config's versions by exact versions
    (and drop ``pinned``, which always runs), from ``path`` or, where it has
    no answer or ``refresh``, from the index; every release resolved before
    for the same item is kept as a variant too."""
    listed = config.get("versions") or {}
    if not any(_is_word(item) for items in listed.values() for item in items or []):
        return
    path = Path(path)
    kept = json.loads(path.read_text()) if path.is_file() else {}
    changed = False
    for backend, items in sorted(listed.items()):
        if backend not in catalog.BACKENDS:
            continue  # no env file to ask for: the config's validation refuses the name
        resolved: List[Dict[str, Any]] = []
        for item in items or []:
            if item == variants.PINNED:
                continue
            if not _is_word(item):
                resolved.append(item)
                continue
            asked = _asked(backend, item, envs_dir)
            key = "{}: {}".format(backend, json.dumps(asked, sort_keys=True))
            entry = kept.get(key)
            if entry is None or refresh:
                answer, reason = _ask_index(backend, asked, envs_dir, ask)
                if answer is None:
                    say(
                        "versions.{}: newest not resolved ({}): planning {}".format(
                            backend,
                            reason,
                            "the releases resolved before"
                            if entry
                            else "its pinned versions alone",
                        )
                    )
                else:
                    entry = _merged(entry, answer)
                    kept[key] = entry
                    changed = True
            if entry is None:
                continue
            latest = entry["releases"][-1]
            say(
                "versions.{}: newest: {} ({}; asked the index {}, {}; --config refresh_newest=true "
                "asks again)".format(
                    backend,
                    ", ".join("{} {}".format(n, v) for n, v in sorted(latest["runs"].items()))
                    or "nothing to run",
                    latest["why"],
                    latest["asked"],
                    path,
                )
            )
            for release in entry["releases"]:
                pins = dict(asked, **release["runs"]) if release["runs"] else None
                if pins and NEWEST not in pins.values() and pins not in resolved:
                    resolved.append(pins)
        listed[backend] = resolved
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(kept, indent=1, sort_keys=True))
        os.replace(str(tmp), str(path))


def _ask_index(backend, asked, envs_dir, ask):
    """({"runs": {distribution: version}, "newest": ..., "why": ...,
    "asked": when, "python": ...}, "") for the distributions ``asked`` names
    ``newest``, or (None, why) where the index gave no answer."""
    python, options, pinned = _env_spec(envs_dir, backend)
    wanted = [name for name, version in asked.items() if version == NEWEST]
    found, pins = {}, {}
    for name in wanted:
        releases, reason = ask(Requirement(name).name, python, options)
        if releases is None:
            return None, "{}: {}".format(name, reason)
        found[name] = releases
        pins[name] = (pinned.get(canonicalize_name(Requirement(name).name)) or (None, None))[1]
    runs, why = choose(found, pins)
    newest = {}
    for name, releases in found.items():
        ordered = sorted((v for v in map(_version, releases) if v is not None), reverse=True)
        newest[name] = str(ordered[0]) if ordered else None
    stamp = datetime.datetime.utcnow().replace(microsecond=0).isoformat() + "Z"
    return {"runs": runs, "newest": newest, "why": why, "asked": stamp, "python": python}, ""


def _merged(entry, answer):
    """The kept entry with the index's new answer as its latest release."""
    releases = list((entry or {}).get("releases", []))
    releases = [r for r in releases if r["runs"] != answer["runs"]]
    return {"releases": releases + [answer]}
