"""How far the timed runs of a workflow have come, and about how long the rest
take: the line each run prints as it starts.

The workflow writes the run records it is about to make to ``PLANNED_RUNS``
when it starts; each run, before its own clocks start, counts those written
since then and multiplies the runs to go by the median wall time of the records
written so far. Timed runs never share the CPU with each other (the
``cpu_exclusive`` resource), so the runs to go take about that long one after
another. Once three records are written, the median time between two of them
is the pace: it holds what runs between the runs too.

Usage: ``python -m dlbench.plan.progress`` (in the workflow's directory).
"""

import datetime
import json
import os
import statistics
import sys

PLANNED_RUNS = "logs/progress/planned-runs.txt"


def write_planned(records, path=PLANNED_RUNS):
    """The records this invocation makes, one path a line; the file's time
    is the invocation's start."""
    text = "".join(record + "\n" for record in records)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write(text)


def written_at(path):
    try:
        return os.path.getmtime(path)
    except OSError:
        return None


def run_seconds(record_path):
    """A record's wall time from its start to its end, or None."""
    try:
        with open(record_path) as handle:
            record = json.load(handle)
        started, finished = (
            datetime.datetime.strptime(record[key], "%Y-%m-%dT%H:%M:%SZ")
            for key in ("started", "finished")
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (finished - started).total_seconds()


def line(planned, since):
    """'runs: 5 of 27 recorded, 22 to go, about 6 min at 16 s a run': of the
    ``planned`` records, those written after ``since`` (a time stamp)."""
    written = {path: written_at(path) for path in planned}
    written = {path: time for path, time in written.items() if time and time >= since}
    to_go = len(planned) - len(written)
    text = "runs: {} of {} recorded, {} to go".format(len(written), len(planned), to_go)
    each = seconds_a_run(written)
    if to_go and each:
        text += ", about {} at {:.0f} s a run (the median so far)".format(
            duration(to_go * each), each
        )
    return text


def seconds_a_run(written):
    """The median time between records written one after another (the run,
    its start and what ran between runs), from {path: time written}; with
    fewer than three, the records' own times."""
    times = sorted(written.values())
    if len(times) >= 3:
        return statistics.median(b - a for a, b in zip(times, times[1:]))
    own = [s for s in (run_seconds(path) for path in written) if s is not None]
    return statistics.median(own) if own else None


def duration(seconds):
    if seconds < 90:
        return "{:.0f} s".format(seconds)
    return "{:.0f} min".format(seconds / 60)


def main():
    try:
        with open(PLANNED_RUNS) as handle:
            planned = [path.strip() for path in handle if path.strip()]
        since = os.path.getmtime(PLANNED_RUNS)
    except OSError:
        return  # a job started by hand: nothing to count against
    print(line(planned, since), file=sys.stderr)


if __name__ == "__main__":
    main()
