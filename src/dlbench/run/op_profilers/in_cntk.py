"""CNTK's performance profiler (cntk.debugging.start_profiler) over the
window, with CNTK's per-node timing on (cntk.debugging.set_node_timing): the
profiler's detail file (``*_detail_*.json``, Chrome trace events in
microseconds) then holds every computation node's forward and backward pass
(``Times28Forward``, ``ReLU32Backward``), nested in the Trainer's phases
(``_Minibatch Iteration`` around ``__Forward + Backward`` and ``__Weight
Update``). Without node timing the profiler gives only those phases.

A node's name is its function's uid, the primitive op's name and a number
unique in the graph: the op is the name without its number (``TimesForward``).
The phases keep what no node holds: ``__Forward + Backward`` the engine's
time between nodes, ``_Minibatch Iteration`` the feeding of the batch and the
step's bookkeeping, and ``__Weight Update`` the learner's update (scope
OPTIMIZER). CNTK's own learners update the parameters in C++ without
computation nodes, so their update is one event per step, not broken into
ops; Keras 2's optimizers run as a universal learner over a graph of their
own, whose nodes the profiler records inside ``__Weight Update`` (OPTIMIZER
too). Inference (``Function.eval``) records its forward nodes alone. Times
are whole microseconds: a node that took less is zero-length (its calls
counted, its time left to the phase around it).

The profiler times on the host clock; on a GPU (``sync_gpu``) it waits for the
device at the end of each phase, so its intervals include the kernels but
name none: every event is HOST. CNTK runs on the CPU in this benchmark.
"""

import bisect
import glob
import json
import os
import re

from dlbench.run.op_profiling import HOST, OPTIMIZER, Event, OpProfiler

MICROSECONDS = 1e-6
# Room for every node event of a window (at most MAX_STEPS steps of a
# recurrent graph that records each node at each time step); the buffer is
# reserved, not touched, until events fill it.
BUFFER_BYTES = 1 << 28
# Each event in CNTK's buffer: its name, NUL-terminated, then its record
# (begin and end clocks, thread id: 24 bytes), for telling a full buffer.
EVENT_RECORD_BYTES = 24
WEIGHT_UPDATE = "__Weight Update"
NODE_EVENT = re.compile(r"^(?P<op>.*?)\d+(?P<direction>Forward|Backward)$")


class Profiler(OpProfiler):
    name = "cntk.debugging profiler (node timing)"

    def version(self):
        import cntk

        return cntk.__version__

    def start(self):
        import cntk

        cntk.debugging.set_node_timing(True)
        cntk.debugging.start_profiler(
            self.workdir, bool(self.adapter.parallel.get("devices")), BUFFER_BYTES
        )
        cntk.debugging.enable_profiler()

    def stop(self):
        import cntk

        cntk.debugging.disable_profiler()
        cntk.debugging.stop_profiler()  # writes the summary and detail files
        # CNTK 2.7's binary has no disable_node_timing (set_node_timing(False)
        # fails): node timing stays on for the rest of the run, after the window
        if hasattr(cntk.cntk_py, "disable_node_timing"):
            cntk.cntk_py.disable_node_timing()
        found = sorted(glob.glob(os.path.join(self.workdir, "*_detail_*.json")))
        if not found:
            raise RuntimeError("CNTK's profiler wrote no detail file in " + self.workdir)
        with open(found[-1]) as detail:
            trace = json.load(detail)
        _check_not_full(trace)
        return _events(trace)


def _check_not_full(trace):
    """CNTK stops recording (with a warning on stderr) once its buffer is
    full: a window cut short that way would look like a complete one."""
    names = [record["name"] for record in trace if record.get("ph") == "E"]
    used = sum(len(name.encode("utf-8")) + 1 + EVENT_RECORD_BYTES for name in names)
    largest = max([len(name.encode("utf-8")) for name in names] or [0])
    if used + largest + 1 + EVENT_RECORD_BYTES > BUFFER_BYTES:
        raise RuntimeError(
            "CNTK's profiler buffer ({} bytes) filled up: the window's events are cut".format(
                BUFFER_BYTES
            )
        )


def op_name(event_name):
    """The op of a node's event (its uid's number dropped); a phase as named."""
    matched = NODE_EVENT.match(event_name)
    return matched.group("op") + matched.group("direction") if matched else event_name


def _events(trace):
    """Pairs each begin ("B") with its end ("E") on its thread: CNTK writes
    an event's two records one after the other, in the order events end."""
    found = []  # (name, thread, start, end) in microseconds
    open_begins = {}
    for record in trace:
        key = (record["tid"], record["name"])
        if record["ph"] == "B":
            open_begins.setdefault(key, []).append(record["ts"])
        elif record["ph"] == "E" and open_begins.get(key):
            found.append((record["name"], record["tid"], open_begins[key].pop(), record["ts"]))
    updates = {}  # per thread: the learner's updates, (start, end), in order
    for name, thread, start, end in found:
        if name == WEIGHT_UPDATE:
            updates.setdefault(thread, []).append((start, end))
    for spans in updates.values():
        spans.sort()
    return [
        Event(
            op_name(name),
            thread,
            start * MICROSECONDS,
            end * MICROSECONDS,
            HOST,
            OPTIMIZER if _in_update(start, end, updates.get(thread, ())) else None,
        )
        for name, thread, start, end in found
    ]


def _in_update(start, end, spans):
    """The event is a learner's update, or a node the learner ran (Keras 2's
    optimizers on CNTK update through a universal learner's own graph)."""
    index = bisect.bisect_right(spans, (start, float("inf"))) - 1
    return index >= 0 and end <= spans[index][1]
