"""TensorFlow's own profiler (``tf.profiler.experimental``) over the window,
read back from the XSpace it writes (``plugins/profile/<run>/<host>.xplane.pb``)
with the protobuf classes TensorFlow ships.

What counts as an op, on the host plane (``/host:CPU``), one lane a thread:

- a graph op that TensorFlow's executor ran, an event named
  ``<node name>:<op type>`` (``sequential/dense/MatMul:_MklMatMul``): kept
  under its op type, as TensorFlow's own op statistics group it;
- an op run eagerly from Python, an ``EagerExecute`` event with its op in
  the ``eager_op`` stat (``ReadVariableOp``, ``IteratorGetNext``); a call of a
  ``tf.function`` (``is_func``) is not an op but a wait for the function's
  ops, which run on other threads and are counted there;
- under XLA (``jit_compile``), an HLO op or thunk that XLA's CPU runtime ran,
  an event with the ``hlo_op`` stat, kept under its HLO name without XLA's
  uniquifying ``.N`` and, where the HLO module's metadata (in the same
  XSpace) names the TensorFlow op it came from, ``:<op type>``
  (``multiply_subtract_fusion:AssignSubVariableOp``). Its ``end: <op>`` event
  is the thunk's completion inside the op's own event and is left to it.

The executor's and XLA's wrappers (``ExecutorState::Process``,
``ThunkExecutor::Execute``, function runs) are not ops: they also hold waits
(``BlockUntilReady``, a function call waiting for its ops on other threads)
that would take a share of the time of the ops running meanwhile, so their
own time, the runtime's scheduling, stays unexplained; so do the tf.data
iterators' ranges and the thread pools' bookkeeping (``ThreadpoolListener``).

On a GPU each ``/device:GPU:N`` plane's streams (lines ``Stream #...``) hold
the kernels and copies CUPTI recorded: returned on the device by their kernel
names, one lane a stream (written from TensorFlow's profiler sources, its
CUPTI collector; not yet run on a GPU).

An op whose TensorFlow name path runs through the optimizer's name scope
(Keras' ``rm_sprop/...``, ``adam/...``) is the optimizer's update; the native
TensorFlow optimizer's fused kernels (``ResourceApplyRMSProp``) carry no name
scope and are the optimizer's by the table's op types.
"""

import glob
import os
import re

from dlbench.run.op_profiling import DEVICE, HOST, OPTIMIZER, Event, OpProfiler

# TensorFlow's own spelling of an op event: "<node name>:<op type>" (its
# profiler's tf_op_utils); a node name has no colon, an op type no space.
TF_OP_EVENT = re.compile(r"^([^:\s]+):([A-Za-z_][A-Za-z0-9_]*)$")
XLA_UNIQUIFIER = re.compile(r"\.\d+$")
# A name scope of an optimizer (Keras 3 names it after its class in snake
# case, Keras 2 and tf.keras after the class): a component of an op's path.
OPTIMIZER_SCOPE = re.compile(
    r"^(sgd|rm_?s_?prop|adam|adamw|adamax|nadam|adagrad|adadelta|ftrl|lion|lamb|"
    r"loss_scale_optimizer|optimizer)(_\d+)?$",
    re.IGNORECASE,
)
HOST_PLANE = "/host:CPU"
HLO_PLANE = "/host:metadata"
GPU_PLANE_PREFIX = "/device:GPU:"
GPU_STREAM_PREFIX = "Stream #"
PICOSECONDS = 1e-12


class Profiler(OpProfiler):
    name = "tf.profiler"

    def version(self):
        import tensorflow as tf

        return tf.__version__

    def unavailable(self):
        import tensorflow as tf

        if not hasattr(getattr(tf, "profiler", None), "experimental"):
            return "TensorFlow {} has no tf.profiler.experimental".format(tf.__version__)
        if _xplane_module() is None:
            return "TensorFlow {} ships no reader of its profiler's XSpace (xplane_pb2)".format(
                tf.__version__
            )
        return None

    def start(self):
        import tensorflow as tf

        options = tf.profiler.experimental.ProfilerOptions(
            host_tracer_level=2, python_tracer_level=0, device_tracer_level=1
        )
        tf.profiler.experimental.start(self.workdir, options=options)

    def stop(self):
        import tensorflow as tf

        tf.profiler.experimental.stop()
        xplane = _xplane_module()
        pattern = os.path.join(self.workdir, "plugins", "profile", "*", "*.xplane.pb")
        events = []
        for path in sorted(glob.glob(pattern)):
            space = xplane.XSpace()
            with open(path, "rb") as stream:
                space.ParseFromString(stream.read())
            events.extend(events_of_space(space))
        return events


def _xplane_module():
    """TensorFlow's protobuf module of the XSpace (its place moved with TSL)."""
    for name in (
        "tensorflow.tsl.profiler.protobuf.xplane_pb2",
        "tsl.profiler.protobuf.xplane_pb2",
        "tensorflow.core.profiler.protobuf.xplane_pb2",
    ):
        try:
            return __import__(name, fromlist=["XSpace"])
        except ImportError:
            continue
    return None


def _hlo_module():
    """TensorFlow's protobuf module of XLA's HloProto, or None."""
    for name in (
        "tensorflow.compiler.xla.service.hlo_pb2",
        "local_xla.xla.service.hlo_pb2",
        "xla.service.hlo_pb2",
    ):
        try:
            return __import__(name, fromlist=["HloProto"])
        except ImportError:
            continue
    return None


def events_of_space(space):
    """The window's ``Event`` list of one XSpace: TensorFlow's and XLA's ops
    on the host, the kernels on each GPU."""
    lines = [line for plane in space.planes for line in plane.lines]
    if not lines:
        return []
    base_ns = min(line.timestamp_ns for line in lines)
    hlo_ops = _hlo_instructions(space)
    events = []
    for plane in space.planes:
        if plane.name == HOST_PLANE:
            events.extend(_host_events(plane, base_ns, hlo_ops))
        elif plane.name.startswith(GPU_PLANE_PREFIX):
            events.extend(_device_events(plane, base_ns, hlo_ops))
    return events


def _stats(plane, stats):
    """{stat name: value} of an event's stats (a reference: the referred name)."""
    found = {}
    for stat in stats:
        kind = stat.WhichOneof("value")
        if kind is None:
            continue
        value = getattr(stat, kind)
        if kind == "ref_value":
            value = plane.stat_metadata[value].name
        found[plane.stat_metadata[stat.metadata_id].name] = value
    return found


def _span(line, event, base_ns):
    """(start, end) in seconds since the XSpace's earliest line, in integers
    of picoseconds until the end, so that sub-microsecond ops keep their length."""
    start = (line.timestamp_ns - base_ns) * 1000 + event.offset_ps
    return start * PICOSECONDS, (start + event.duration_ps) * PICOSECONDS


def _host_events(plane, base_ns, hlo_ops):
    events = []
    for line in plane.lines:
        lane = (plane.name, line.id)
        for event in line.events:
            if event.duration_ps <= 0:
                continue
            metadata = plane.event_metadata[event.metadata_id]
            found = _host_op(plane, metadata.name, event, hlo_ops)
            if found is None:
                continue
            name, path = found
            start, end = _span(line, event, base_ns)
            events.append(Event(name, lane, start, end, HOST, _scope(path)))
    return events


def _host_op(plane, event_name, event, hlo_ops):
    """(op name, TensorFlow name path or None) of a host event that is an op,
    else None."""
    graph_op = TF_OP_EVENT.match(event_name)
    if graph_op:
        return graph_op.group(2), graph_op.group(1)
    if event_name != "EagerExecute" and not event.stats:
        return None
    stats = _stats(plane, event.stats)
    if "hlo_op" in stats:
        return _xla_op(stats, hlo_ops)
    if event_name == "EagerExecute" and "eager_op" in stats and not stats.get("is_func"):
        return stats["eager_op"], None
    return None


def _xla_op(stats, hlo_ops):
    """An XLA op's name (its HLO name without the uniquifier, and the
    TensorFlow op type it came from) and TensorFlow name path."""
    hlo_name = stats["hlo_op"]
    op_type, path = hlo_ops.get((stats.get("hlo_module"), hlo_name), ("", ""))
    name = XLA_UNIQUIFIER.sub("", hlo_name)
    if op_type:
        name = "{}:{}".format(name, op_type)
    return name, path or None


def _device_events(plane, base_ns, hlo_ops):
    events = []
    for line in plane.lines:
        if not line.name.startswith(GPU_STREAM_PREFIX):
            continue  # CUPTI's overhead and derived lines, not kernels
        lane = (plane.name, line.id)
        for event in line.events:
            if event.duration_ps <= 0:
                continue
            stats = _stats(plane, event.stats)
            path = None
            tf_op = TF_OP_EVENT.match(str(stats.get("tf_op", "")))
            if tf_op:
                path = tf_op.group(1)
            elif "hlo_op" in stats:
                path = _xla_op(stats, hlo_ops)[1]
            start, end = _span(line, event, base_ns)
            name = plane.event_metadata[event.metadata_id].name
            events.append(Event(name, lane, start, end, DEVICE, _scope(path)))
    return events


def _scope(path):
    """OPTIMIZER where a TensorFlow name path runs through an optimizer's
    name scope, else None."""
    if path and any(OPTIMIZER_SCOPE.match(part) for part in path.split("/")):
        return OPTIMIZER
    return None


def _hlo_instructions(space):
    """{(HLO module name, instruction name): (TensorFlow op type, name path)}
    of every XLA module the XSpace's metadata plane holds."""
    hlo = _hlo_module()
    found = {}
    if hlo is None:
        return found
    for plane in space.planes:
        if plane.name != HLO_PLANE:
            continue
        for metadata in plane.event_metadata.values():
            for stat in metadata.stats:
                if stat.WhichOneof("value") != "bytes_value":
                    continue
                proto = hlo.HloProto()
                try:
                    proto.ParseFromString(stat.bytes_value)
                except Exception:  # another stat's bytes: not a module
                    continue
                module = proto.hlo_module
                by_id = dict((c.id, c) for c in module.computations)
                for computation in module.computations:
                    for instruction in computation.instructions:
                        op_type, path = _origin(instruction, by_id)
                        found[(module.name, instruction.name)] = (op_type, path)
    return found


def _origin(instruction, computations, depth=0):
    """The TensorFlow op type and name an HLO instruction came from; a fusion
    that XLA left without them, those of its fused computation's root."""
    if instruction.metadata.op_type or instruction.metadata.op_name or depth > 3:
        return instruction.metadata.op_type, instruction.metadata.op_name
    for called in instruction.called_computation_ids:
        computation = computations.get(called)
        if computation is None:
            continue
        for inner in computation.instructions:
            if inner.id == computation.root_id:
                return _origin(inner, computations, depth + 1)
    return "", ""
