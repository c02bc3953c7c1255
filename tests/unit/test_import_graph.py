"""The library's import graph (dlbench.plan.import_graph): no cycle, counting
every import at the top of a file or inside a function; the code digest of a
run's family holds every file a run reaches."""

import ast

from dlbench.plan import import_graph


def test_the_library_has_no_import_cycle():
    edges = import_graph.graph()
    assert len(edges) > 40
    assert "dlbench.run.run_data" in edges["dlbench.run.harness"]  # at the top of the file
    assert "dlbench.run.run_data" in edges["dlbench.run.equivalence"]  # inside a function
    assert import_graph.cycles(edges) == []


def test_reading_the_import_statements_finds_what_parsing_the_files_finds():
    """Every module's imports from its import lines alone are those a parse
    of the whole file finds (a docstring line that reads as an import, or an
    import this reading misses, would show here)."""
    found = import_graph.modules()
    for name, path in found.items():
        whole = import_graph.statement_targets([ast.parse(path.read_text())], found) - {name}
        assert import_graph.imports_of(name) == whole, name


def test_an_import_over_several_lines_and_one_in_prose():
    text = (
        "from dlbench.run import (\n    harness,\n    run_data,\n)\n"
        "def f():\n    import dlbench.catalog as catalog\n"
        '"""\nfrom dlbench the tables are made\n"""\n'
    )
    statements = import_graph.import_statements(text)
    names = [
        alias.name
        for tree in statements
        for node in ast.walk(tree)
        if hasattr(node, "names")
        for alias in node.names
    ]
    assert names == ["harness", "run_data", "dlbench.catalog"]


def test_the_cycle_finder_finds_one():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_graph.cycles(edges) == [["a", "b", "c"]]


def test_the_code_digest_holds_everything_a_run_imports():
    """The digest's core, read from the folder (run/) and the imports, holds
    everything the harness and the supervisor reach (hand-kept lists had
    missed integrity, compiles, run_data and model_check in turn), and no
    framework's adapter."""
    core = set(import_graph.run_core())
    reached = {
        str(path.relative_to(import_graph.PACKAGE))
        for path in import_graph.closure(["dlbench.run.harness", "dlbench.run.supervise"])
    }
    assert reached <= core
    for name in ("run/run_data.py", "run/compiles.py", "run/model_check.py", "run/integrity.py"):
        assert name in core
    assert {"__init__.py", "catalog/__init__.py", "models/workloads/__init__.py"} <= core
    assert not [path for path in core if path.endswith("_adapter.py")]
    for path in core:
        assert (import_graph.PACKAGE / path).is_file(), path


def test_what_runs_in_an_environment_is_run_and_its_leaves():
    """Every file under run/ runs in a backend's environment, with what it
    imports from elsewhere; nothing of the analysis or the planning does."""
    files = {str(p.relative_to(import_graph.PACKAGE)) for p in import_graph.in_environment()}
    run_folder = import_graph.PACKAGE / "run"
    assert {str(p.relative_to(import_graph.PACKAGE)) for p in run_folder.rglob("*.py")} <= files
    assert "models/layers/keras_layers.py" in files  # a leaf of the Keras adapters
    outside = {path.split("/")[0] for path in files if "/" in path}
    assert outside <= {"run", "models", "host", "record", "catalog"}, outside
    assert not [path for path in files if path.startswith(("analysis/", "plan/"))]
    # the record's contract is written there, its schema (jsonschema) read here
    assert "record/contract.py" in files and "record/record_schema.py" not in files


def test_each_package_imports_only_what_its_docstring_allows():
    """Every package (and the catalog) says in its docstring which of the
    library's packages it imports ("Imports: ..."); its modules import
    nothing else of the library. The analysis never imports run/: what a run
    wrote reaches it through its record."""
    import re

    edges = import_graph.graph()
    units = sorted({name.split(".")[1] for name in edges if name.count(".") >= 1})
    allowed = {}
    for unit in units:
        path = import_graph.PACKAGE / unit
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        stated = re.search(r"Imports: (.*?)(?:\.(?:\s|$))", docstring, re.S)
        assert stated, "{}: its docstring states no 'Imports:'".format(path)
        allowed[unit] = set(re.findall(r"\b(\w+)\b", stated.group(1))) & set(units)
    found = {}
    for module, targets in edges.items():
        if module.count(".") < 1:
            continue  # the package's own __init__: a docstring
        unit = module.split(".")[1]
        for target in targets:
            other = target.split(".")[1]
            if other != unit and other not in allowed[unit]:
                found.setdefault(unit, set()).add("{} -> {}".format(module, target))
    assert found == {}
    assert "run" not in allowed["analysis"] and "run" not in allowed["record"]
