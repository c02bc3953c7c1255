"""The line each timed run prints as it starts: how many runs of this
invocation have their record, how many are left and about how long they
take (dlbench.plan.progress)."""

import json
import os

from dlbench.plan import progress

SINCE = 1_000_000.0


def record(folder, name, written, seconds=None):
    path = folder / "{}.json".format(name)
    times = {}
    if seconds is not None:
        times = {"started": "2026-01-01T00:00:00Z", "finished": "2026-01-01T00:00:%02dZ" % seconds}
    path.write_text(json.dumps(times))
    os.utime(path, (written, written))
    return str(path)


def test_before_any_record_it_says_how_many_runs_are_planned(tmp_path):
    planned = [str(tmp_path / "{}.json".format(n)) for n in range(4)]
    assert progress.line(planned, SINCE) == "runs: 0 of 4 recorded, 4 to go"


def test_records_from_an_earlier_invocation_do_not_count(tmp_path):
    old = record(tmp_path, "old", SINCE - 60, seconds=9)
    new = record(tmp_path, "new", SINCE + 30, seconds=20)
    planned = [old, new, str(tmp_path / "next.json")]
    assert progress.line(planned, SINCE) == (
        "runs: 1 of 3 recorded, 2 to go, about 40 s at 20 s a run (the median so far)"
    )


def test_with_three_records_the_pace_is_the_time_between_them(tmp_path):
    written = [record(tmp_path, str(n), SINCE + 100 + 12 * n, seconds=5) for n in range(3)]
    planned = written + [str(tmp_path / "{}.json".format(n)) for n in range(3, 13)]
    assert progress.line(planned, SINCE) == (
        "runs: 3 of 13 recorded, 10 to go, about 2 min at 12 s a run (the median so far)"
    )


def test_the_planned_list_is_read_back_with_its_time(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    progress.write_planned(["a/run.json", "b/run.json"])
    progress.main()
    assert capsys.readouterr().err == "runs: 0 of 2 recorded, 2 to go\n"
