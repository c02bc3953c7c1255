"""mx.profiler over the window: every operator MXNet's engine ran, as its
Chrome trace (``mx.profiler.dump()``) records them, one lane per engine
worker thread of each device (the trace's pid and tid). Operators of Gluon's
cached graphs and of keras-mxnet's symbolic executors are profiled like the
imperative ones (profile_symbolic, profile_imperative). A static graph
(Gluon's hybridized CachedOp, keras-mxnet's inference executor) runs in the
bulk segments MXNet made when it built the graph: one event per segment,
named by its operators joined with commas and cut at the profiler's 127
characters (op_categories.mxnet_ops sorts them by the operators named).

The C API calls (profile_api) are left out: they are the Python thread's
calls into the engine (pushing operators, waiting for them), whose time is
the operators' own on the worker threads, so counting them too would count
that time twice. Memory counters (profile_memory) are not intervals.

The optimizer's update is MXNet's own update operators (``rmsprop_update``,
``adam_update``, ...): its table (op_categories.mxnet_ops) knows them by
name; the trace has no range around an optimizer's step.

On a GPU, MXNet 1.x waits for an operator's CUDA stream before the engine
marks it complete, so an operator on a "gpu/N" lane spans its kernels: those
are the device's ops (from MXNet's engine and profiler sources; not run
here, where there is no GPU).
"""

import json
import os

from dlbench.run.op_profiling import DEVICE, HOST, Event, OpProfiler

MICROSECONDS = 1e-6
# The trace's duration events: complete ("X", with dur) or begin/end pairs.
# The async "b"/"e" events repeat the same operators in the profiler's
# domain view; counters ("C") and metadata ("M") are no intervals.
COMPLETE, BEGIN, END = "X", "B", "E"


class Profiler(OpProfiler):
    name = "mx.profiler"

    def version(self):
        import mxnet

        return mxnet.__version__

    def _trace_path(self):
        return os.path.join(self.workdir, "profile.json")

    def start(self):
        import mxnet

        # Operators queued before the window stay out of it.
        mxnet.nd.waitall()
        # aggregate_stats: while it runs, MXNet's engine does not bulk
        # imperative operators together, so each is its own event.
        mxnet.profiler.set_config(
            profile_symbolic=True,
            profile_imperative=True,
            profile_memory=False,
            profile_api=False,
            aggregate_stats=True,
            filename=self._trace_path(),
        )
        mxnet.profiler.set_state("run")

    def stop(self):
        import mxnet

        mxnet.nd.waitall()  # the engine's workers finish the window's operators
        mxnet.profiler.set_state("stop")
        mxnet.profiler.dump()
        with open(self._trace_path()) as trace:
            return trace_events(json.load(trace))


def trace_events(trace):
    """[Event] of a Chrome trace that mx.profiler dumped: each operator on
    its lane (pid, tid), on a GPU's process the device's."""
    found = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    processes = dict(
        (record.get("pid"), record.get("args", {}).get("name", ""))
        for record in found
        if record.get("ph") == "M" and record.get("name") == "process_name"
    )
    # microseconds since the epoch: from the trace's first one, so that
    # float seconds keep their microseconds
    origin = min([record["ts"] for record in found if record.get("ph") in (COMPLETE, BEGIN)] or [0])
    events = []
    open_events = {}  # lane: [(name, start)] of its begun events, innermost last
    for record in found:
        phase = record.get("ph")
        if phase not in (COMPLETE, BEGIN, END):
            continue
        lane = (record.get("pid"), record.get("tid"))
        start = (record["ts"] - origin) * MICROSECONDS
        if phase == BEGIN:
            open_events.setdefault(lane, []).append((record.get("name"), start))
            continue
        if phase == COMPLETE:
            name, end = record.get("name"), start + float(record.get("dur", 0)) * MICROSECONDS
        elif open_events.get(lane):
            end = start
            name, start = _close(open_events[lane], record.get("name"))
        else:  # an end whose begin came before the profiler started
            continue
        if end > start:
            place = DEVICE if str(processes.get(lane[0], "")).startswith("gpu") else HOST
            events.append(Event(name, lane, start, end, place, None))
    return events


def _close(begun, name):
    """The begun event an "E" record ends: the innermost of its name, else
    the innermost (an "E" may carry no name)."""
    for index in range(len(begun) - 1, -1, -1):
        if name is None or begun[index][0] == name:
            return begun.pop(index)
    return begun.pop()
