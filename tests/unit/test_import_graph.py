"""The library's import graph has no cycle: every import of a dlbench module
by another counts, at the top of a file or inside a function (a cycle hidden
in a function still ties the two modules together)."""

import ast

from testkit import REPO

PACKAGE = REPO / "src" / "dlbench"


def module_name(path):
    parts = ("dlbench",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph():
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dlbench"):
                for alias in node.names:
                    full = "{}.{}".format(node.module, alias.name)
                    graph[name].add(full if full in modules else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name.startswith("dlbench"))
    return {
        name: {target for target in targets if target in modules and target != name}
        for name, targets in graph.items()
    }


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
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

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_library_has_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 40
    assert "dlbench.run_data" in graph["dlbench.harness"]  # at the top of the file
    assert "dlbench.run_data" in graph["dlbench.equivalence"]  # inside a function
    assert cycles(graph) == []


def test_the_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
