"""The lines of code count what a user of each framework writes: the
workload's model and the family's program (dlbench/models/programs), and
nothing of the adapters. Generated from the registry: every implementation
of every built-in workload."""

import ast
import importlib

import pytest

from dlbench import catalog
from dlbench.models import lines
from dlbench.plan import import_graph
from dlbench.registry import BUILT_IN

FAMILIES = sorted({backend["family"] for backend in catalog.BACKENDS.values()})
# one backend per family and task: the count depends on the family alone
IMPLEMENTATIONS = sorted(
    {
        (model, task, min(b for b in catalog.BACKENDS if catalog.BACKENDS[b]["family"] == family))
        for model in BUILT_IN.models
        for family in BUILT_IN.families(model)
        for task in ("train", "infer")
        if any(
            catalog.BACKENDS[b]["family"] == family
            and catalog.BACKENDS[b].task_not_applicable(task) is None
            for b in catalog.BACKENDS
        )
    }
)


def _tasks_of(family):
    return [
        task
        for task in ("train", "infer")
        if any(
            b["family"] == family and b.task_not_applicable(task) is None
            for b in catalog.BACKENDS.values()
        )
    ]


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_has_a_program_whose_roots_are_its_functions(family):
    program = lines.PROGRAMS / "in_{}.py".format(family)
    functions = {
        node.name
        for node in ast.parse(program.read_text()).body
        if isinstance(node, ast.FunctionDef)
    }
    for task in _tasks_of(family):
        roots = lines.roots(program, task)
        assert roots and set(roots) <= functions, (family, task, roots)
    # it imports on the oldest Python of the backends' environments: no framework at import
    module = importlib.import_module("dlbench.models.programs.in_" + family)
    assert not {"torch", "jax", "tensorflow", "keras", "mxnet"} & set(vars(module))


@pytest.mark.parametrize("backend", sorted(catalog.BACKENDS))
def test_each_adapter_runs_its_familys_program(backend):
    """The counted program is the code the timed runs execute: the adapter
    imports it."""
    adapter = "dlbench.run.backends.{}_adapter".format(catalog.BACKENDS[backend].adapter)
    program = "dlbench.models.programs.in_" + catalog.BACKENDS[backend]["family"]
    assert program in import_graph.imports_of(adapter)


@pytest.mark.parametrize("model, task, backend", IMPLEMENTATIONS)
def test_the_count_follows_only_the_model_and_the_program(model, task, backend):
    model_files, program_files = lines.counted_files(backend, model, task, BUILT_IN)
    workload = BUILT_IN.source(model, catalog.BACKENDS[backend]["family"])
    assert str(workload) in {str(path) for path in model_files}
    assert all(str(path) == str(workload) or path.parent == lines.LAYERS for path in model_files), (
        model_files
    )
    assert program_files == {lines.program_file(backend)}
    counted = lines.count(backend, model, task, BUILT_IN)
    assert counted["model_lines"] > 0 and counted["program_lines"] > 0
