"""The g++ Theano and PyTensor compile their ops with where a backend asks
for precompiled headers (dlbench/run/precompiled_headers.py), with the
machine's g++ on a source that starts as their ops do."""

import subprocess
import sys

from dlbench.run import precompiled_headers

SCRIPT = precompiled_headers.__file__
SOURCE = """#include <vector>
#include <string>
#include <cmath>
extern "C" double norm(double x, double y) { std::vector<double> v{x, y};
  return std::sqrt(v[0] * v[0] + v[1] * v[1]); }
"""


def test_an_ops_flags_keep_what_the_header_needs_and_drop_what_links():
    arguments = ["-shared", "-O1", "--param", "l1-cache-size=32", "-Xlinker", "--no-as-needed"]
    arguments += ["-DX=1", "-I/inc", "-L/lib", "-o", "/out/m.so", "/tmp/mod.cpp", "-lpython3.9"]
    source, flags = precompiled_headers.header_flags(arguments)
    assert source == "/tmp/mod.cpp"
    assert flags == ["-O1", "--param", "l1-cache-size=32", "-DX=1", "-I/inc"]
    assert precompiled_headers.header_flags(["-dumpversion"]) == (None, None)
    assert precompiled_headers.header_flags(["-O1", "probe.c", "-o", "probe"]) == (None, None)


def test_the_second_compile_of_the_same_lines_uses_them_precompiled(tmp_path):
    store, modules = tmp_path / "headers", []
    for name in ("first", "second", "third"):
        source = tmp_path / name / "mod.cpp"
        source.parent.mkdir()
        source.write_text(SOURCE)
        module = tmp_path / name / "mod.so"
        done = subprocess.run(
            [sys.executable, str(SCRIPT), "--compiler", "g++", "--store", str(store), "--"]
            + ["-shared", "-fPIC", "-O1", "-H", "-o", str(module), str(source)],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        modules.append((module, done.stderr))
    (made,) = [p for p in store.iterdir() if p.is_dir()]
    assert (made / "leading_includes.h.gch").is_file()
    # g++ -H marks a precompiled header it used with "!"
    used = ["! " + str(made / "leading_includes.h.gch") in err for _, err in modules]
    assert used == [False, True, True]
    assert all(module.is_file() for module, _ in modules)


def test_lines_that_do_not_precompile_are_tried_once(tmp_path):
    store, flags = tmp_path / "headers", ["-O1"]
    includes = ["#include <no_such_header_anywhere.h>"]
    for _ in range(3):
        assert precompiled_headers.precompiled("g++", str(store), flags, includes) is None
    assert sorted(p.suffix for p in store.iterdir()) == [".failed", ".seen"]
