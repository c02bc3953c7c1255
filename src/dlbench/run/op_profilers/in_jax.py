"""jax.profiler over the window (``start_trace``/``stop_trace``), read back
with JAX's own reader of the trace it wrote (``jax.profiler.ProfileData``):
every XLA op XLA ran in the window, one event per executed HLO instruction
(on the CPU, each thunk on XLA's own threads; on a GPU, each kernel and
copy on the device's streams).

The trace names an op only by its HLO instruction (``hlo_op``, e.g.
``ynn_fusion.3``) and its module; what the instruction computes is in the
optimized HLO of the executable, which JAX keeps for every live executable
(``Client.live_executables()``). Each op's name is the instruction's name,
its kind in brackets (a fusion's kind is the heaviest op it fuses: a
convolution, a dot, a pooling window, a reduce; else elementwise or the
data movement it does) and the jax operation it came from (the HLO
metadata's ``op_name`` path, the jitted function's own prefix left out):
``ynn_fusion.3 (dot fusion) jvp(dense)/dot_general``. An op whose Python
source (the metadata's stack frames) is an optimizer's update (optax,
Keras' optimizers) has the optimizer's scope. Where the HLO of a module is
not found (an executable freed before the trace was read), the op keeps
the bare instruction name."""

import os
import re

from dlbench.run.op_profiling import DEVICE, HOST, OPTIMIZER, Event, OpProfiler

NANOSECONDS = 1e-9
TRACE_SUFFIX = ".xplane.pb"
HOST_PLANE = "/host:CPU"
DEVICE_PLANE_PREFIX = "/device:"
# Lines of a device plane that are no kernel of the program: the profiler's
# own cost, and those a trace viewer derives from the kernels (each kernel
# again, grouped by module or op), which a raw trace has not.
DERIVED_LINES = (
    "CUPTI overhead",
    "XLA Modules",
    "XLA Ops",
    "XLA TraceMe",
    "Steps",
    "Framework Ops",
    "Framework Name Scope",
    "TensorFlow Ops",
    "TensorFlow Name Scope",
    "Source code",
)
# The Python source of an optimizer's update of the weights: optax's
# transformations and apply_updates (not its losses), Keras 3's optimizers,
# the benchmark's own loss scaling around an optax optimizer.
OPTIMIZER_SOURCE = re.compile(
    r"/optax/(?!losses/)|/keras/src/optimizers/|/keras/src/backend/jax/optimizer\.py"
)
OPTIMIZER_FUNCTION = re.compile(r"LossScaled\.update")

# What decides a fusion's kind, heaviest first: the first of these opcodes it
# fuses. A fusion of none of them is elementwise, or data movement where it
# only moves data (DATA_MOVEMENT_OPCODES, in the order that names it).
HEAVY_OPCODES = (
    "convolution",
    "dot",
    "custom-call",
    "reduce-window",
    "select-and-scatter",
    "reduce",
    "sort",
    "fft",
    "triangular-solve",
    "cholesky",
    "all-reduce",
    "reduce-scatter",
    "all-gather",
    "all-to-all",
    "collective-permute",
)
DATA_MOVEMENT_OPCODES = (
    "gather",
    "scatter",
    "transpose",
    "concatenate",
    "pad",
    "dynamic-update-slice",
    "dynamic-slice",
    "slice",
    "reverse",
    "copy",
    "convert",
    "bitcast-convert",
    "broadcast",
    "reshape",
    "bitcast",
    "iota",
    "tuple",
    "get-tuple-element",
)
NOT_COMPUTED = ("parameter", "constant")

_COMPUTATION = re.compile(r"^(?:ENTRY\s+)?%?([^\s(]+)\s.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s+(?:ROOT\s+)?%?([^\s=]+) = .*? ([a-z][a-z0-9-]*)\((.*)$")
_CALLS = re.compile(r"\bcalls=%?([^\s,}]+)")
_TARGET = re.compile(r'\bcustom_call_target="([^"]*)"')
_OP_NAME = re.compile(r'\bop_name="((?:[^"\\]|\\.)*)"')
_FRAME = re.compile(r"\bstack_frame_id=(\d+)")
_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_NUMBER = re.compile(r"(\w+)=(\d+)")
_JITTED_PREFIX = re.compile(r"^(?:jit|pmap|xla_pmap)\([^/]*\)/")


class Profiler(OpProfiler):
    name = "jax.profiler"

    def version(self):
        import jax

        return jax.__version__

    def unavailable(self):
        import jax.profiler

        if not hasattr(jax.profiler, "ProfileData"):
            return "this jax has no jax.profiler.ProfileData to read its own trace back"
        return None

    def start(self):
        import jax

        if not hasattr(jax.profiler, "ProfileOptions"):  # a jax without options: its defaults
            jax.profiler.start_trace(self.workdir)
            return
        options = jax.profiler.ProfileOptions()
        # The Python tracer records every Python call, none of them an op:
        # only its cost would show in the window.
        options.python_tracer_level = 0
        jax.profiler.start_trace(self.workdir, profiler_options=options)

    def stop(self):
        import jax
        from jax.profiler import ProfileData

        jax.profiler.stop_trace()
        found = []
        for path in _trace_files(self.workdir):
            found.extend(_op_events(ProfileData.from_file(path)))
        modules = _modules(jax, set(op[0] for op in found))
        return [_event(modules, op) for op in found]


def _trace_files(workdir):
    for folder, _, files in os.walk(workdir):
        for name in sorted(files):
            if name.endswith(TRACE_SUFFIX):
                yield os.path.join(folder, name)


def _op_events(profile):
    """(program id, hlo_op, name, lane, start, end, place) of every XLA op:
    the host's events that name an HLO instruction, every event of a
    device's streams."""
    found = []
    for plane in profile.planes:
        on_device = plane.name.startswith(DEVICE_PLANE_PREFIX)
        if not on_device and plane.name != HOST_PLANE:
            continue
        place = DEVICE if on_device else HOST
        for line in plane.lines:
            if line.name in DERIVED_LINES:
                continue
            lane = (plane.name, line.name)
            for event in line.events:
                duration = event.duration_ns
                if duration <= 0:
                    continue
                op, program = _op_of(event)
                if op is None and not on_device:
                    continue  # Python's, PjRt's and the executor's ranges around the ops
                start = event.start_ns
                found.append(
                    (
                        program,
                        op,
                        event.name,
                        lane,
                        start * NANOSECONDS,
                        (start + duration) * NANOSECONDS,
                        place,
                    )
                )
    return found


def _op_of(event):
    """(hlo_op, program_id) of an event's stats (None where it has none);
    reading an event's stats is most of the reading's cost, so it stops at
    the two it needs."""
    op, program = None, None
    for key, value in event.stats:
        if key == "hlo_op":
            op = value
        elif key == "program_id":
            program = value
        else:
            continue
        if op is not None and program is not None:
            break
    return op, program


def _event(modules, found):
    program, op, name, lane, start, end, place = found
    scope = None
    if op is not None:  # else a device's copy or kernel outside any HLO op
        module = modules.get(program)
        described = module.describe(op) if module else None
        name = op
        if described is not None:
            name, in_optimizer = described
            scope = OPTIMIZER if in_optimizer else None
    return Event(name, lane, start, end, place, scope)


def _modules(jax, programs):
    """{program id: HloText} of the live executables' modules that ran in
    the window."""
    found = {}
    clients = []
    for device in jax.devices():
        if device.client not in clients:
            clients.append(device.client)
    for client in clients:
        try:
            executables = client.live_executables()
        except Exception:  # a jaxlib without it: ops keep their bare names
            continue
        for executable in executables:
            for module in executable.hlo_modules():
                program = _module_id(module.as_serialized_hlo_module_proto())
                if program in programs and program not in found:
                    found[program] = HloText(module.to_string())
    return found


def _module_id(serialized):
    """HloModuleProto's ``id`` (field 5), the trace's ``program_id``: the
    top-level fields are walked in protobuf's wire format, the rest skipped."""
    serialized, position = bytearray(serialized), 0
    while position < len(serialized):
        key, position = _varint(serialized, position)
        field, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, position = _varint(serialized, position)
            if field == 5:
                return value
        elif wire_type == 2:
            length, position = _varint(serialized, position)
            position += length
        elif wire_type == 1:
            position += 8
        elif wire_type == 5:
            position += 4
        else:
            return None
    return None


def _varint(data, position):
    value, shift = 0, 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, position


class HloText(object):
    """One optimized HLO module as its text gives it: each instruction's
    opcode and attributes, each computation's instructions, the Python
    stack frames of the metadata."""

    def __init__(self, text):
        self.instructions = {}  # name: (opcode, rest of its line)
        self.computations = {}  # name: [instruction names]
        self.sections = dict((section, {}) for section in _SECTIONS)
        self._described = {}
        section, computation = None, None
        for line in text.splitlines():
            if line in _SECTIONS:
                section = line
                continue
            if section:
                if line.strip():
                    number, _, value = line.partition(" ")
                    self.sections[section][int(number)] = value
                    continue
                section = None
            if computation is None:
                header = _COMPUTATION.match(line)
                if header and not line.startswith(" "):
                    computation = self.computations.setdefault(header.group(1), [])
                continue
            if line.startswith("}"):
                computation = None
                continue
            found = _INSTRUCTION.match(line)
            if found:
                name, opcode, rest = found.groups()
                self.instructions[name] = (opcode, rest)
                computation.append(name)

    def describe(self, op):
        """(name, in the optimizer's update) of instruction ``op``."""
        if op not in self._described:
            self._described[op] = self._describe(op)
        return self._described[op]

    def _describe(self, op):
        if op not in self.instructions:
            return None
        opcode, rest = self.instructions[op]
        fused = list(self._fused(rest)) if opcode == "fusion" else []
        if opcode == "fusion":
            kind, deciding = self._fusion_kind(fused)
            label = kind + " fusion"
        else:
            label, deciding = opcode, op
        if opcode == "custom-call" or label == "custom-call fusion":
            target = _TARGET.search(self.instructions[deciding][1])
            label = "{} {}".format(label, target.group(1) if target else "").strip()
        # The jax operation of the op that gives the kind; where XLA made
        # that op without metadata, the nearest fused op to the root that has it.
        path, in_optimizer = "", False
        for candidate in [deciding] + fused[::-1] + [op]:
            candidate_rest = self.instructions[candidate][1]
            op_name = _OP_NAME.search(candidate_rest)
            if op_name:
                path = _JITTED_PREFIX.sub("", op_name.group(1))
                frame = _FRAME.search(candidate_rest)
                in_optimizer = bool(frame) and self._in_optimizer(int(frame.group(1)))
                break
        return "{} ({}) {}".format(op, label, path).strip(), in_optimizer

    def _fusion_kind(self, fused):
        """(kind, the instruction that gives it) of a fusion of the
        instructions ``fused``: the heaviest of them."""
        computed = [
            (self.instructions[name][0], name)
            for name in fused
            if self.instructions[name][0] not in NOT_COMPUTED
        ]
        for heavy in HEAVY_OPCODES:
            for opcode, name in computed:
                if opcode == heavy:
                    return opcode, name
        moved = [(opcode, name) for opcode, name in computed if opcode in DATA_MOVEMENT_OPCODES]
        root = fused[-1] if fused else None  # the text lists a computation's root last
        if len(moved) < len(computed) or not computed:
            return "elementwise", root
        for data_movement in DATA_MOVEMENT_OPCODES:
            for opcode, name in moved:
                if opcode == data_movement:
                    return opcode, name
        return "elementwise", root

    def _fused(self, rest, depth=0):
        called = _CALLS.search(rest)
        if not called or depth > 8:
            return
        for name in self.computations.get(called.group(1), ()):
            opcode, inner = self.instructions[name]
            if opcode == "fusion":
                for nested in self._fused(inner, depth + 1):
                    yield nested
            else:
                yield name

    def _in_optimizer(self, frame):
        """Whether stack frame ``frame`` or a caller of it is an optimizer's
        update. The text lists each frame's parent one above its number (the
        proto's 0 for none, then 1-based)."""
        frames, locations = self.sections["StackFrames"], self.sections["FileLocations"]
        files, functions = self.sections["FileNames"], self.sections["FunctionNames"]
        seen = set()
        while frame in frames and frame not in seen:
            seen.add(frame)
            numbers = dict((key, int(value)) for key, value in _NUMBER.findall(frames[frame]))
            location = dict(
                (key, int(value))
                for key, value in _NUMBER.findall(
                    locations.get(numbers.get("file_location_id"), "")
                )
            )
            if OPTIMIZER_SOURCE.search(files.get(location.get("file_name_id"), "")):
                return True
            if OPTIMIZER_FUNCTION.search(functions.get(location.get("function_name_id"), "")):
                return True
            frame = numbers.get("parent_frame_id", 0) - 1
        return False
