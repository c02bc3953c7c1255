"""The library's own import graph, read from the source with Python's parser
(imports at the top of a file and inside functions alike): what a module
reaches (``closure``, the code digest of a run's family takes its files from
it instead of a hand-kept list) and the graph's cycles (a test keeps it free
of them)."""

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
# What every run executes whatever its family, beside its adapters, layers
# and workloads: the code digest's core (workflow/rules/common.smk). A test
# checks it against closure(["dlbench.harness", "dlbench.supervise"]), which
# would also take in what only a function of a workload's facts imports.
RUN_CORE = (
    "__init__.py",
    "harness.py",
    "supervise.py",
    "run_data.py",
    "runtime.py",
    "catalog.py",
    "launch.py",
    "gpus.py",
    "probe.py",
    "equivalence.py",
    "initial_weights.py",
    "integrity.py",
    "cpu_isa.py",
    "energy.py",
    "compiles.py",
    "model_check.py",
    "backends/__init__.py",
    "backends/frameworks.py",
    "backends/native.py",
    "workloads/__init__.py",
    "layers/__init__.py",
)


def module_name(path, package=PACKAGE):
    parts = ("dlbench",) + Path(path).relative_to(package).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.lru_cache(maxsize=None)
def modules(package=PACKAGE):
    """{module name: its file} of every module of the package."""
    return {module_name(path, package): path for path in sorted(Path(package).rglob("*.py"))}


@functools.lru_cache(maxsize=None)
def graph(package=PACKAGE):
    """{module: the package's modules it imports}; a package's import of its
    own module (``from dlbench import harness``) counts as that module's."""
    found = modules(package)
    edges = {name: set() for name in found}
    for name, path in found.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dlbench"):
                for alias in node.names:
                    full = "{}.{}".format(node.module, alias.name)
                    edges[name].add(full if full in found else node.module)
            elif isinstance(node, ast.Import):
                edges[name].update(a.name for a in node.names if a.name.startswith("dlbench"))
    return {
        name: frozenset(t for t in targets if t in found and t != name)
        for name, targets in edges.items()
    }


def _with_parents(name):
    """A module and the packages above it, whose __init__ runs first."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def closure(entry_modules, package=PACKAGE):
    """The files of ``entry_modules`` and of everything they import, and of
    the packages those live in, sorted."""
    edges, found = graph(package), modules(package)
    seen, waiting = set(), list(entry_modules)
    while waiting:
        name = waiting.pop()
        for module in _with_parents(name):
            if module in found and module not in seen:
                seen.add(module)
                waiting.extend(edges[module])
    return sorted(found[module] for module in seen)


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
