"""Op-level time from each framework's own profiler, over a short window of
steady steps that runs after the run's clocks have stopped.

A timed run ends with its epochs (or its timed inference calls), its
evaluation and its record's figures; then, where the spec asks for it
(``op_profile``), the harness turns the framework's profiler on for a window
of a few more training steps (or inference calls) in the same shapes, turns
it off, and writes what the profiler saw to ``ops.json``: every op name with
its calls and its seconds, the window's wall time and steps. No figure of the
record comes from the window, and nothing of the window is inside a clock
that the record reports; the window's own wall time over the timed steady
step is the profiler's cost (dlbench.analysis.op_profiles).

Each framework's profiler is one module of ``dlbench.run.op_profilers``
(``in_<framework>.py``) with a class ``Profiler`` (``OpProfiler`` below says
what it implements). Where a framework has none, or it cannot run here, its
``ops.json`` says why. Importable on Python 3.6; no framework is imported at
module level.
"""

import collections
import importlib
import math
import shutil
import tempfile
import time
import traceback
from typing import Any, Callable, Optional, Tuple

from dlbench.record.op_profile import (  # noqa: F401 (the profilers' vocabulary, here for them)
    DEVICE,
    HOST,
    OPTIMIZER,
    OpTime,
    not_profiled,
    ops_file,
)
from dlbench.run.failures import error_text, failure_reason

# The window of a run: training and inference leave (work, steps, model) in
# their result under this key, and the harness profiles it (``of_run``) once
# the record's figures are final.
WINDOW = "op_window"
# What they leave there: the window's steps to run (a call), how many, the model.
Window = Tuple[Callable[[], Any], int, Any]

# A window of at least this many seconds (and ``MIN_STEPS``), at most one epoch
# of steps: long enough for a steady sample of every op of a step, short
# enough to cost a few per cent of a timed run.
WINDOW_SECONDS = 0.3
MIN_STEPS = 3
MAX_STEPS = 200


class Event(collections.namedtuple("Event", "name lane start end place scope")):
    """One interval a profiler recorded: an op (or a range that holds ops)
    on a ``lane`` (a thread, a device stream), from ``start`` to ``end`` in
    seconds of the profiler's clock."""

    __slots__ = ()


def exclusive_times(events):
    """[OpTime] of ``events``: each instant of the timeline belongs to the
    innermost event of every lane that is busy then, shared equally between
    the lanes of one place (the host's threads, a device's streams) busy at
    once, so that the ops' seconds of a place add up to the time some op ran
    there (never more than the window) and a range that only holds other ops
    keeps only the time between them."""
    calls = collections.Counter((event.name, event.scope, event.place) for event in events)
    seconds = collections.defaultdict(float)
    for place in set(event.place for event in events):
        segments = []  # (start, end, key): where each event is its lane's innermost
        for lane_events in _by_lane(event for event in events if event.place == place):
            segments.extend(_innermost_segments(lane_events))
        _share(segments, seconds)
    return [
        OpTime(name, calls[key], seconds.get(key, 0.0), place, scope)
        for key in sorted(calls, key=lambda key: (key[0], key[1] or "", key[2]))
        for name, scope, place in [key]
    ]


def _share(segments, seconds):
    """Add to ``seconds`` each segment's time, an instant shared equally by
    the segments open at once."""
    opening = collections.defaultdict(list)
    closing = collections.defaultdict(list)
    for start, end, key in segments:
        opening[start].append(key)
        closing[end].append(key)
    boundaries = sorted(set(opening) | set(closing))
    open_keys = collections.Counter()
    for left, right in zip(boundaries, boundaries[1:]):
        for key in closing.get(left, ()):
            open_keys[key] -= 1
            if not open_keys[key]:
                del open_keys[key]
        for key in opening.get(left, ()):
            open_keys[key] += 1
        busy = sum(open_keys.values())
        if busy:
            share = (right - left) / float(busy)
            for key, count in open_keys.items():
                seconds[key] += share * count


def _by_lane(events):
    """The events of each lane, those of no length left out."""
    lanes = collections.defaultdict(list)
    for event in events:
        if event.end > event.start:
            lanes[event.lane].append(event)
    return lanes.values()


def _innermost_segments(events):
    """(start, end, key) where each event of one lane is its innermost open
    event: nested events (a range around its ops) give their children's time
    to the children."""
    ordered = sorted(events, key=lambda event: (event.start, -event.end))
    segments = []
    stack = []  # open events, outermost first
    cursor = None

    def emit(until):
        if stack and cursor is not None and until > cursor:
            top = stack[-1]
            segments.append((cursor, until, (top.name, top.scope, top.place)))

    for event in ordered:
        while stack and stack[-1].end <= event.start:
            emit(stack[-1].end)
            cursor = stack[-1].end
            stack.pop()
        emit(event.start)
        cursor = event.start
        if stack and event.end > stack[-1].end:  # overlaps its parent's end: clip it
            event = event._replace(end=stack[-1].end)
        stack.append(event)
    while stack:
        emit(stack[-1].end)
        cursor = stack[-1].end
        stack.pop()
    return segments


def busy_seconds(events, place=DEVICE):
    """The seconds at least one event of ``place`` ran: a device's busy time
    (its idle time is the window's rest)."""
    intervals = sorted((event.start, event.end) for event in events if event.place == place)
    total, reach = 0.0, None
    for start, end in intervals:
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


class OpProfiler(object):
    """A framework's own op profiler around a window of steps. A module
    ``dlbench.run.op_profilers.in_<framework>`` defines ``Profiler``, a
    subclass that implements:

    - ``name``: the profiler as the tables name it (``torch.profiler``);
    - ``start()``: turn the profiler on, just before the window;
    - ``stop()``: turn it off after the window (the device's work waited
      for) and return the window's ``Event`` list (``exclusive_times`` turns
      it into ops), or directly a list of ``OpTime`` where the profiler
      itself gives each op's own time;

    and, where the profiler cannot run in some setting, ``unavailable()``:
    why not (None where it can). ``adapter`` is the run's adapter (its
    framework, devices and settings); ``workdir`` a folder for the
    profiler's own files, deleted after the window; ``model`` the model the
    window trains or infers with (as the adapter built it)."""

    name: Optional[str] = None

    def __init__(self, adapter, workdir, model=None):
        self.adapter = adapter
        self.workdir = workdir
        self.model = model

    def unavailable(self):
        return None

    def version(self):
        """The profiler's version, for ops.json (the framework's by default)."""
        return None

    def start(self):
        raise NotImplementedError

    def stop(self):
        raise NotImplementedError


def profiler_for(adapter, workdir, model=None):
    """The adapter's framework's profiler for a window on ``model``, and
    why it cannot run (None where it can); (None, why) where the framework
    has none."""
    module_name = "dlbench.run.op_profilers.in_" + adapter.framework
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        if getattr(error, "name", None) != module_name:
            raise
        return None, "{} has no op profiler in this benchmark yet".format(adapter.framework)
    profiler = module.Profiler(adapter, workdir, model)
    return profiler, profiler.unavailable()


def window_steps(steady_step_seconds, steps_per_epoch):
    """How many steps the window takes: ``WINDOW_SECONDS`` of steps at the
    timed steady pace, at least ``MIN_STEPS``, at most an epoch's steps."""
    wanted = MIN_STEPS
    if steady_step_seconds:
        wanted = max(MIN_STEPS, int(math.ceil(WINDOW_SECONDS / steady_step_seconds)))
    return max(1, min(wanted, MAX_STEPS, steps_per_epoch))


def profile_window(profiler, adapter, work, steps):
    """Run ``work()`` (the window's steps) under ``profiler``: what ops.json
    keeps of it. The profiler's own start and stop are outside the window's
    clock; the ops are those it recorded between them."""
    profiler.start()
    try:
        started = time.perf_counter()
        work()
        adapter.synchronize()
        wall = time.perf_counter() - started
    finally:
        found = profiler.stop()
    ops = found if found and isinstance(found[0], OpTime) else exclusive_times(found or [])
    device_busy = busy_seconds(found) if found and isinstance(found[0], Event) else None
    if device_busy == 0.0 and not any(op.place == DEVICE for op in ops):
        device_busy = None
    return ops_file(
        adapter.framework,
        profiler.name,
        profiler.version(),
        steps,
        wall,
        device_busy,
        [op for op in ops if op.calls or op.seconds],
        None if ops else "{} recorded no op in the window".format(profiler.name),
    )


def of_run(spec, adapter, window, processes):
    """ops.json of the run (a RunSpec): the framework's profiler over the
    window, or why there is none. A profiler that fails costs the profile,
    not the run."""
    if not spec.op_profile:
        return not_profiled("profile is off for this workload")
    if processes > 1:
        return not_profiled(
            "its devices run in one process each (torchrun): the op profile takes one process"
        )
    if window is None:
        return not_profiled("the {} task has no steady window".format(spec.task))
    workdir = tempfile.mkdtemp(prefix="dlbench-ops-")
    profiler = None
    try:
        work, steps, model = window
        profiler, reason = profiler_for(adapter, workdir, model)
        if reason:
            return not_profiled(reason, adapter.framework, profiler and profiler.name)
        started = time.perf_counter()
        found = profile_window(profiler, adapter, work, steps)
        # the whole profile's cost to the run: the profiler's start, the
        # window, its stop and the reading of what it recorded
        found["profile_seconds"] = time.perf_counter() - started
        print(
            "op profile: {} over {} steps, {:.3f} s, {} ops".format(
                found["profiler"], steps, found["window_seconds"], len(found["ops"])
            ),
            flush=True,
        )
        return found
    except Exception:  # the run's figures stand; its profile says what went wrong
        traceback.print_exc()
        return not_profiled(
            "the profiler failed: " + failure_reason(error_text()),
            adapter.framework,
            profiler and profiler.name,
        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
