"""The framework set-up the adapters share, where it needs no framework."""

from dlbench.run.backends import frameworks


def test_autograph_bytecode_is_swept_once_its_module_is_gone(tmp_path):
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    gone = cache / "__autograph_generated_fileab12cd34.cpython-311.pyc"
    alive = cache / "__autograph_generated_fileef56gh78.cpython-311.pyc"
    (tmp_path / "__autograph_generated_fileef56gh78.py").write_text("x = 1\n")
    other = cache / "mine.cpython-311.pyc"
    for path in (gone, alive, other):
        path.write_bytes(b"")
    frameworks.remove_orphaned_autograph_bytecode(str(tmp_path))
    assert sorted(path.name for path in cache.iterdir()) == [alive.name, other.name]
    alive.unlink()
    other.unlink()
    frameworks.remove_orphaned_autograph_bytecode(str(tmp_path))
    assert not cache.exists()  # the folder goes once it is empty


def test_jax_compilation_cache_is_the_environments_where_asked_and_reported(tmp_path, monkeypatch):
    # the process' environment as a dict of its own: what the function sets stays in the test
    environment = {k: v for k, v in frameworks.os.environ.items() if not k.startswith("JAX_")}
    monkeypatch.setattr(frameworks.os, "environ", environment)
    monkeypatch.setattr(frameworks.sys, "prefix", str(tmp_path))
    assert frameworks.jax_compilation_cache(False) == {
        "jax_compilation_cache": None,
        "compile_cache_warm": False,
    }
    assert "JAX_COMPILATION_CACHE_DIR" not in environment
    cache = tmp_path / "jax-compilation-cache"
    assert frameworks.jax_compilation_cache(True) == {
        "jax_compilation_cache": str(cache),
        "compile_cache_warm": False,
    }
    assert environment["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] == "0"
    cache.mkdir()
    (cache / "jit_train_step-abc").write_bytes(b"x")
    assert frameworks.jax_compilation_cache(True)["compile_cache_warm"] is True
    # the user's own folder is kept, and reported even where the setting is off
    environment.clear()
    environment["JAX_COMPILATION_CACHE_DIR"] = str(tmp_path / "mine")
    assert frameworks.jax_compilation_cache(False) == {
        "jax_compilation_cache": str(tmp_path / "mine"),
        "compile_cache_warm": False,
    }


def test_theanos_g_plus_plus_flags_end_with_the_backends_own(tmp_path, monkeypatch):
    from dlbench.run.backends import keras2_adapter
    from dlbench.run.backends.keras_on import theano

    environment = {k: v for k, v in theano.os.environ.items() if k != "THEANO_FLAGS"}
    monkeypatch.setattr(theano.os, "environ", environment)
    monkeypatch.setattr(theano.sys, "prefix", str(tmp_path))
    flags = {}
    for settings in ({}, {"cxxflags": "-O1  -march=x86-64-v3"}):
        adapter = keras2_adapter.Adapter("theano", settings)
        assert adapter.on is theano  # the framework's own code, by its name
        theano.setup(adapter, threads=1, seed=0)
        flags[len(settings)] = dict(f.split("=", 1) for f in environment["THEANO_FLAGS"].split(","))
        assert adapter.applied["theano_flags"] == environment["THEANO_FLAGS"]
    assert flags[0]["gcc.cxxflags"] == "-g0"
    assert flags[1]["gcc.cxxflags"] == "-g0 -O1 -march=x86-64-v3"
    assert flags[1]["base_compiledir"] == str(tmp_path / "theano-cache")


def test_theano_compiles_through_the_precompiled_headers_script_where_asked(tmp_path, monkeypatch):
    from dlbench.run.backends import keras2_adapter
    from dlbench.run.backends.keras_on import theano

    environment = {k: v for k, v in theano.os.environ.items() if k != "THEANO_FLAGS"}
    monkeypatch.setattr(theano.os, "environ", environment)
    monkeypatch.setattr(theano.sys, "prefix", str(tmp_path))
    theano.setup(keras2_adapter.Adapter("theano", {}), threads=1, seed=0)
    assert "cxx=" not in environment["THEANO_FLAGS"]
    theano.setup(keras2_adapter.Adapter("theano", {"precompiled_headers": True}), 1, 0)
    flags = dict(f.split("=", 1) for f in environment["THEANO_FLAGS"].split(","))
    script = tmp_path / "theano-cache" / "g++-precompiled-headers"
    assert flags["cxx"] == str(script)
    assert "precompiled_headers.py --compiler " in script.read_text()
    # what a later run finds is the same script, not written again
    written = script.stat().st_mtime_ns
    asked = {"precompiled_headers": True}
    assert frameworks.precompiled_headers_compiler(asked, str(script.parent)) == str(script)
    assert script.stat().st_mtime_ns == written


def test_pytensor_compiles_a_function_when_it_is_first_called():
    from dlbench.run.backends import native_pytensor_adapter

    compiled = []

    def compile_function(inputs, outputs):
        compiled.append((inputs, outputs))
        return lambda *args: sum(args) * outputs

    function = native_pytensor_adapter._compiled_when_called(compile_function, ["x"], 10)
    assert compiled == []  # a training run that never predicts compiles nothing for it
    assert function(1, 2) == 30 and function(3) == 30
    assert compiled == [(["x"], 10)]
