"""The library's import graph (dlbench.import_graph): no cycle, counting
every import at the top of a file or inside a function; the code digest of a
run's family holds every file a run reaches."""

from dlbench import import_graph


def test_the_library_has_no_import_cycle():
    edges = import_graph.graph()
    assert len(edges) > 40
    assert "dlbench.run_data" in edges["dlbench.harness"]  # at the top of the file
    assert "dlbench.run_data" in edges["dlbench.equivalence"]  # inside a function
    assert import_graph.cycles(edges) == []


def test_the_cycle_finder_finds_one():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_graph.cycles(edges) == [["a", "b", "c"]]


def test_the_code_digest_holds_everything_a_run_imports():
    """RUN_CORE, the digest's list, misses nothing the harness and the
    supervisor reach (hand-kept lists had missed integrity, compiles,
    run_data and model_check in turn)."""
    reached = {
        str(path.relative_to(import_graph.PACKAGE))
        for path in import_graph.closure(["dlbench.harness", "dlbench.supervise"])
    }
    assert reached <= set(import_graph.RUN_CORE)
    for path in import_graph.RUN_CORE:
        assert (import_graph.PACKAGE / path).is_file(), path


def test_what_a_run_reaches_is_read_from_the_imports():
    reached = {
        str(path.relative_to(import_graph.PACKAGE))
        for path in import_graph.closure(["dlbench.harness", "dlbench.supervise"])
    }
    # the modules hand-kept lists used to miss, and the packages' __init__
    for name in ("run_data.py", "compiles.py", "model_check.py", "integrity.py", "__init__.py"):
        assert name in reached
    assert "backends/__init__.py" in reached and "workloads/__init__.py" in reached
    # what runs only in the main environment is not
    assert not reached & {"collect.py", "tables.py", "plots.py", "stats.py", "machines.py"}
