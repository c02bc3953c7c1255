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
