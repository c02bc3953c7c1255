"""A backend is defined in one place: its catalog entry, its env files and
its adapter (found by its name). Everything else that names backends is
checked here against the catalog, so that adding one touches only what
ADDING_BACKENDS.md lists."""

import ast
import importlib
import re

import yaml

from dlbench import catalog
from dlbench.analysis import published
from dlbench.environments import setup_steps
from dlbench.run import backends
from dlbench.run.backends import base
from testkit import REPO

BACKENDS_FOLDER = REPO / "src" / "dlbench" / "run" / "backends"


def test_every_backend_has_its_env_files_and_no_other_exists():
    for backend, entry in catalog.BACKENDS.items():
        cpu, cuda = REPO / "envs" / (backend + ".yaml"), REPO / "envs" / (backend + ".cuda.yaml")
        assert cpu.exists() != bool(entry.get("gpu_only")), backend
        assert cuda.exists() == entry["gpu_build"], backend
    named = {path.name.split(".")[0] for path in (REPO / "envs").glob("*.yaml")}
    assert named - set(catalog.BACKENDS) == {"main"}


def test_every_backend_finds_its_adapter_by_its_name_and_every_adapter_serves_one():
    used = set()
    for backend in catalog.BACKENDS:
        module = importlib.import_module(backends.adapter_module(catalog.BACKENDS[backend]))
        assert issubclass(module.Adapter, base.Adapter), backend
        used.add(module.__name__.rpartition(".")[2])
    files = {path.stem for path in BACKENDS_FOLDER.glob("*_adapter.py")}
    assert files == used


def test_what_names_backends_elsewhere_follows_the_catalog():
    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    text = yaml.safe_dump(schema)
    for enum in re.findall(r"enum:\n((?:\s*- [\w-]+\n)+)", text):
        names = set(re.findall(r"- ([\w-]+)", enum))
        if names & set(catalog.BACKENDS):
            assert names == set(catalog.BACKENDS)
    assert set(published.BACKENDS.values()) <= set(catalog.BACKENDS)
    steps = {e["environment_setup"] for e in catalog.BACKENDS.values() if "environment_setup" in e}
    assert steps <= set(setup_steps.SETUP_STEPS)


def test_each_compile_cache_is_a_resource_the_profile_and_the_rules_declare():
    caches = {e["compile_cache"] for e in catalog.BACKENDS.values() if "compile_cache" in e}
    profile = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    declared = {
        name[: -len("_compile_cache")]
        for name in profile["resources"]
        if name.endswith("_compile_cache")
    }
    assert declared == caches
    rules = (REPO / "workflow" / "rules" / "bench.smk").read_text()
    assert set(re.findall(r'compile_cache_share\("(\w+)"\)', rules)) == caches


def test_adding_a_backend_lists_those_places():
    guide = (BACKENDS_FOLDER / "ADDING_BACKENDS.md").read_text()
    for place in ("envs/<backend>.yaml", "catalog.BACKENDS", "<adapter>_adapter.py"):
        assert place in guide, place
    assert "test_parity" not in guide and "ADAPTERS" not in ast.dump(
        ast.parse((BACKENDS_FOLDER / "__init__.py").read_text())
    )
