"""Seals on data files: what the workflow discards and the harness refuses."""

import os

import pytest

from dlbench.run import failures, integrity, run_data


@pytest.fixture
def sealed(tmp_path):
    path = tmp_path / "data.npz"
    path.write_bytes(os.urandom(4096))
    integrity.seal(path)
    return path


def flip_a_byte_keeping_size_and_time(path):
    stat = path.stat()
    data = bytearray(path.read_bytes())
    data[100] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_an_untouched_file_matches_its_seal(sealed):
    assert integrity.check(sealed) is None
    assert integrity.discard_if_corrupt([sealed]) == []
    assert sealed.exists()


def test_a_truncated_file_is_discarded(sealed):
    sealed.write_bytes(sealed.read_bytes()[:1000])
    (reason,) = integrity.discard_if_corrupt([sealed, sealed.with_name("absent.npz")])
    assert "is 1000 bytes; it was 4096" in reason
    assert not sealed.exists() and not os.path.exists(integrity.seal_path(sealed))


def test_flipped_bits_are_found_even_with_size_and_time_kept(sealed):
    flip_a_byte_keeping_size_and_time(sealed)
    assert integrity.check(sealed, full=False) is None  # the quick look misses it
    assert "SHA-256" in integrity.check(sealed)
    with pytest.raises(integrity.CorruptData, match="refusing to load corrupted data"):
        run_data.load_dataset(str(sealed))
    assert integrity.discard_if_corrupt([sealed]) and not sealed.exists()


def test_a_file_without_a_seal_is_not_trusted(tmp_path):
    path = tmp_path / "old.npz"
    path.write_bytes(b"made before seals")
    (reason,) = integrity.discard_if_corrupt([path])
    assert "no readable seal" in reason and not path.exists()


def test_memory_errors_are_named():
    text = failures.name_memory_errors("Traceback ...\nMemoryError\n")
    assert text.startswith("out of memory:")
    assert failures.name_memory_errors("ValueError: shapes") == "ValueError: shapes"
