"""The library's own import graph, read from the source with Python's parser
(imports at the top of a file and inside functions alike): what a module
reaches (``closure``, the code digest of a run's family takes its files from
it instead of a hand-kept list) and the graph's cycles (a test keeps it free
of them)."""

import ast
import functools
import re
import textwrap
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parents[1]  # src/dlbench
# The code that executes in a backend's environment (and must import on the
# oldest Python an env file pins, 3.6) is what lives under run/, with what it
# imports from elsewhere: the workloads' definitions, the layers, the catalog.
RUN_PACKAGE = "dlbench.run"
ADAPTERS_PACKAGE = "dlbench.run.backends"
OP_PROFILERS_PACKAGE = "dlbench.run.op_profilers"


def module_name(path, package=PACKAGE):
    parts = ("dlbench",) + Path(path).relative_to(package).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.lru_cache(maxsize=None)
def modules(package=PACKAGE):
    """{module name: its file} of every module of the package."""
    return {module_name(path, package): path for path in sorted(Path(package).rglob("*.py"))}


# A line that begins an import of the library's own modules.
IMPORT_LINE = re.compile(r"^[ \t]*(?:from|import)[ \t]+dlbench\b", re.MULTILINE)


def import_statements(text):
    """The statements of ``text`` that import the library's modules, parsed
    one by one: parsing whole files took 0.3 s of every Snakemake start's
    planning. A line of a docstring that reads as such a statement is read as
    one (a test holds the result to the whole files' parse)."""
    statements = []
    for match in IMPORT_LINE.finditer(text):
        end = match.start()
        while True:  # to the statement's end: its parentheses closed, no backslash
            newline = text.find("\n", end)
            end = len(text) if newline < 0 else newline + 1
            snippet = text[match.start() : end]
            if end == len(text) or (
                snippet.count("(") <= snippet.count(")") and not snippet.rstrip().endswith("\\")
            ):
                break
        try:
            statements.append(ast.parse(textwrap.dedent(snippet)))
        except SyntaxError:
            pass  # prose, not code
    return statements


@functools.lru_cache(maxsize=None)
def imports_of(name, package=PACKAGE):
    """The package's modules that ``name`` imports, at the top of its file
    or inside a function; a package's import of its own module (``from
    dlbench.run import harness``) counts as that module's."""
    found = modules(package)
    return frozenset(
        target
        for target in statement_targets(import_statements(found[name].read_text()), found)
        if target != name
    )


def statement_targets(trees, found):
    """The modules of ``found`` (name: file) that the import statements in
    the parsed ``trees`` import."""
    targets = set()
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dlbench"):
            for alias in node.names:
                full = "{}.{}".format(node.module, alias.name)
                targets.add(full if full in found else node.module)
        elif isinstance(node, ast.Import):
            targets.update(a.name for a in node.names if a.name.startswith("dlbench"))
    return {target for target in targets if target in found}


def graph(package=PACKAGE):
    """{module: the package's modules it imports} (imports_of), of every module."""
    return {name: imports_of(name, package) for name in modules(package)}


def _with_parents(name):
    """A module and the packages above it, whose __init__ runs first."""
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


def closure(entry_modules, package=PACKAGE):
    """The files of ``entry_modules`` and of everything they import, and of
    the packages those live in, sorted."""
    found = modules(package)
    seen, waiting = set(), list(entry_modules)
    while waiting:
        name = waiting.pop()
        for module in _with_parents(name):
            if module in found and module not in seen:
                seen.add(module)
                waiting.extend(imports_of(module, package))
    return sorted(found[module] for module in seen)


def under(package_name, package=PACKAGE):
    """The modules of a sub-package, by name."""
    return [
        name
        for name in modules(package)
        if name == package_name or name.startswith(package_name + ".")
    ]


def in_environment(package=PACKAGE):
    """The files that run in a backend's environment: every module under
    run/ and what those import, sorted."""
    return closure(under(RUN_PACKAGE, package), package)


@functools.lru_cache(maxsize=None)
def run_core(package=PACKAGE):
    """What every run executes whatever its family, relative to the package:
    run/ less the adapters' and the op profilers' packages (the adapters,
    the profilers and the modules they share are the families' and the
    frameworks' own; the adapters' __init__, which finds them, is not), with
    what it imports. The code digest of a family adds its adapters and its
    frameworks' op profilers with what they import, its layers and its
    workloads (dlbench.plan.targets.family_sources)."""
    adapters = set(under(ADAPTERS_PACKAGE, package)) - {ADAPTERS_PACKAGE}
    adapters |= set(under(OP_PROFILERS_PACKAGE, package))
    entry = [name for name in under(RUN_PACKAGE, package) if name not in adapters]
    return tuple(str(path.relative_to(package)) for path in closure(entry, package))


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}  # the order in which the search reached a module
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []

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
