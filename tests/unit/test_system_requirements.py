"""The machine check that make test runs before pytest: disk space."""

import collections

import system_requirements

Usage = collections.namedtuple("Usage", "total used free")


def free_room(monkeypatch, gigabytes):
    usage = Usage(10**13, 0, int(gigabytes * 1e9))
    monkeypatch.setattr(system_requirements.shutil, "disk_usage", lambda folder: usage)


def test_too_little_disk_space_is_named_with_the_folder(tmp_path, monkeypatch):
    needed = system_requirements.SESSION_FOLDER_GB
    free_room(monkeypatch, needed - 1)
    problem = system_requirements.disk_space_problem(str(tmp_path))
    assert str(tmp_path) in problem and "TMPDIR" in problem and "pytest-of-" in problem
    free_room(monkeypatch, needed)
    assert system_requirements.disk_space_problem(str(tmp_path)) is None
