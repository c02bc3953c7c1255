"""The machine check that make test runs before pytest: disk space."""

import collections
import getpass

import system_requirements

Usage = collections.namedtuple("Usage", "total used free")


def free_room(monkeypatch, gigabytes):
    usage = Usage(10**13, 0, int(gigabytes * 1e9))
    monkeypatch.setattr(system_requirements.shutil, "disk_usage", lambda folder: usage)


def test_too_little_disk_space_is_named_with_the_folder(tmp_path, monkeypatch):
    needed = system_requirements.SESSION_FOLDER_GB
    free_room(monkeypatch, needed - 1)
    problem = system_requirements.disk_space_problem(tmp_path)
    assert str(tmp_path) in problem and "TMPDIR" in problem
    free_room(monkeypatch, needed)
    assert system_requirements.disk_space_problem(tmp_path) is None


def test_older_test_sessions_count_as_free_since_pytest_removes_them(tmp_path, monkeypatch):
    old = tmp_path / "pytest-of-{}".format(getpass.getuser()) / "pytest-7"
    old.mkdir(parents=True)
    (old / "venv.bin").write_bytes(b"\1" * 4_000_000)
    needed = system_requirements.SESSION_FOLDER_GB
    free_room(monkeypatch, needed - 0.002)  # short by less than the old session holds
    assert system_requirements.disk_space_problem(tmp_path) is None
    free_room(monkeypatch, needed - 0.006)
    assert system_requirements.disk_space_problem(tmp_path) is not None
