"""Where a cell's steady state spends its time, layer by layer, and why one
backend is slower than another: the python stacks the workflow samples
(dlbench.run.stack_sampling) read back.

A cell's python stacks are py-spy's raw collapsed stacks of the harness'
process: one line per distinct stack, its frames outermost first, and how
many samples had it. A Python frame reads ``function (path:line)``, a
native one ``symbol (library)``. Only the samples of the clocked steady
state count: stacks through ``harness.steady_epoch`` or
``harness.steady_predictions`` and, inside it, ``harness.timed`` (the copies
of data the harness makes off the clock are left out). Each such sample
belongs to one layer (``LAYERS``), decided in this order:

1. *feeding data*: a frame of code that batches or converts the data
   (``DATA_CODE``: Keras' data adapters, the native adapters' batching, the
   frameworks' data loaders, the harness' data module);
2. *compute kernels*: a native frame, below the innermost Python frame, of a
   math library or a framework's kernels (``KERNELS``: MKL, oneDNN, OpenBLAS,
   Eigen, torch's vectorised CPU kernels, cuDNN, cuBLAS, the CUDA runtime);
3. *waiting*: the innermost frame waits (``WAITS``: a futex, a condition
   variable, a sleep, a device synchronisation), on a device or on the
   framework's own threads, whose work the sampled thread does not show;
4. else the owner of the innermost Python frame that has one: *Keras*
   (``keras/``), *the workload's code* (``dlbench/models/``: the model, and
   the program a user writes around it: the loop, the loss, the update), *the harness*
   (``dlbench/run/``: the harness and the adapters), or *the framework's
   runtime and dispatch* (any other package: torch, tensorflow, jax, ...).
"""

import collections
import math
import re

import pandas as pd

from dlbench.analysis import plots_stacked_bars, plots_style
from dlbench.plan import matrix

LAYERS = ("kernels", "framework", "keras", "workload", "data", "harness", "waiting")
LAYER_NAMES = {
    "kernels": "compute kernels",
    "framework": "framework runtime and dispatch",
    "keras": "Keras",
    "workload": "the workload's code",
    "data": "feeding data",
    "harness": "the harness",
    "waiting": "waiting",
}
HARNESS = "dlbench/run/harness.py"
STEADY = ("steady_epoch", "steady_predictions")
CLOCK = "timed"
# Python code that batches or converts a run's data: (file, function) patterns.
DATA_CODE = (
    (r"keras/src/trainers/(data_adapters/|epoch_iterator)", r""),
    (r"keras/utils/generic_utils\.py", r"^slice_arrays$"),  # Keras 2's batches
    (r"keras/engine/training_utils\.py", r"^(standardize|check_array|batch_shuffle)"),
    (r"torch/utils/data/", r""),
    (r"tensorflow/python/data/", r""),
    (r"mxnet/(io|gluon/data)/", r""),
    (r"chainer/(iterators|dataset)/", r""),
    (r"dlbench/run/run_data\.py", r""),
    (r"dlbench/run/backends/", r"^(batches|_rows|_inputs|_labels)$"),  # the native adapters'
)
KERNELS = re.compile(
    r"mkl|dnnl|onednn|mkldnn|jit_(avx|uni|sse|brgemm)|brgemm|gemm|openblas|Eigen::|xsmm|"
    r"xnnpack|cudnn|cublas|cudart|libcuda\.|::AVX2::|::AVX512|at::vec|_kernel\b|kernel_|"
    # CNTK's math library, MXNet's operators (mshadow), TensorFlow's functors, XLA's CPU runtime
    r"Cntk\.Math|CPUMatrix|mshadow|mxnet::op::|tensorflow::functor|xla::cpu|__xla_cpu",
    re.IGNORECASE,
)
WAITS = re.compile(
    r"futex|pthread_cond|sem_(timed)?wait|lll_lock_wait|nanosleep|^sleep|time_sleep|epoll_wait|"
    r"^poll$|^select$|sched_yield|__kmp_(wait|hyper_barrier|fork_barrier|join_barrier)|"
    r"WaitForNotification|BlockUntilReady|block_until_ready|[Ss]ynchronize|WaitFor|"
    r"acquire_lock|lock_timed|take_gil|PyCOND_WAIT|PyMUTEX_LOCK",
)
# Python's own waits (a sample read without native frames ends in them).
PYTHON_WAITS = ((r"(^|/)threading\.py$", r"^(wait|join|acquire|_wait_for_tstate_lock)$"),)
OWNERS = (
    (re.compile(r"(^|/)(keras|tf_keras)/"), "keras"),
    (re.compile(r"(^|/)dlbench/models/"), "workload"),
    (re.compile(r"(^|/)dlbench/run/"), "harness"),
)
# Python's own modules: they belong to whoever called them.
# (py-spy names them by their bare file name).
STANDARD_LIBRARY = re.compile(r"^(<frozen|<string>|[a-z_]+\.py$)")
FRAME = re.compile(r"^(?P<name>.*) \((?P<where>[^()]*)\)$")


class Frame(collections.namedtuple("Frame", "name where python")):
    """One frame of a stack: its function or symbol, its file (with the
    line) or library, and whether it is Python's."""

    @property
    def path(self):
        return self.where.rsplit(":", 1)[0] if self.python else self.where

    def label(self):
        return "{} ({})".format(self.name, self.path)


def frame(text):
    found = FRAME.match(text)
    if found is None:
        return Frame(text, "", False)
    where = found.group("where")
    python = bool(re.search(r"\.py:\d+$|^<frozen", where))
    return Frame(found.group("name"), where, python)


def read_stacks(path):
    """[(frames, samples)] of a raw collapsed stacks file."""
    found = []
    with open(str(path)) as handle:
        for line in handle:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack and count.isdigit():
                found.append((tuple(frame(text) for text in stack.split(";")), int(count)))
    return found


def clocked(frames):
    """The frames inside the clock of a steady-state sample, or None for a
    sample outside it."""
    steady = clock = None
    for index, found in enumerate(frames):
        if found.python and found.path.endswith(HARNESS):
            if found.name in STEADY:
                steady = index
            elif found.name == CLOCK and steady is not None:
                clock = index
    return None if clock is None else frames[clock + 1 :]


def _is_data(found):
    return found.python and any(
        re.search(where, found.path) and re.search(name, found.name) for where, name in DATA_CODE
    )


def _owner(found):
    for pattern, owner in OWNERS:
        if pattern.search(found.path):
            return owner
    if STANDARD_LIBRARY.match(found.path):
        return None
    return "framework"


def layer_of(frames):
    """The layer one clocked sample's time belongs to (``LAYERS``)."""
    if any(_is_data(found) for found in frames):
        return "data"
    python = [index for index, found in enumerate(frames) if found.python]
    innermost = python[-1] if python else -1
    native = frames[innermost + 1 :]
    if any(KERNELS.search(found.label()) for found in native):
        return "kernels"
    named = _innermost_named(frames)
    if named is not None and WAITS.search(named.name):
        return "waiting"
    if python and any(
        re.search(where, frames[innermost].path) and re.search(name, frames[innermost].name)
        for where, name in PYTHON_WAITS
    ):
        return "waiting"
    for index in reversed(python):
        owner = _owner(frames[index])
        if owner is not None:
            return owner
    return "framework"


def frame_layer(found):
    """The layer one frame belongs to by itself (a flame graph's colour)."""
    if _is_data(found):
        return "data"
    if not found.python:
        if KERNELS.search(found.label()):
            return "kernels"
        return "waiting" if WAITS.search(found.name) else "framework"
    return _owner(found) or "framework"


def _innermost_named(frames):
    """The innermost frame with a name (py-spy gives an address where a
    native frame has no symbol)."""
    return next((found for found in reversed(frames) if not found.name.startswith("0x")), None)


def hot_spot(frames):
    """What a sample names as its hot spot: the innermost frame with a
    symbol, and the innermost Python frame that called it."""
    python = [found for found in frames if found.python]
    leaf = _innermost_named(frames)
    named = leaf.label() if leaf is not None else "?"
    if python and leaf is not None and not leaf.python:
        named += " from " + python[-1].name
    return named


def layers_of(stacks):
    """{"samples": clocked samples, "layers": {layer: samples}, "hot": {hot
    spot: samples}} of a run's stacks."""
    layers = collections.Counter()
    hot = collections.Counter()
    for frames, count in stacks:
        inside = clocked(frames)
        if inside is None:
            continue
        layers[layer_of(inside)] += count
        hot[hot_spot(inside)] += count
    return {"samples": sum(layers.values()), "layers": dict(layers), "hot": dict(hot)}


def seconds_per_step(record, summary_row):
    """The timed runs' seconds per training step (their median steady epoch
    over the steps of an epoch) or per timed inference call (a batch)."""
    hyper = record.get("hyper") or {}
    batch = hyper.get("batch_size")
    if record.get("task") == "infer":
        per_1000 = summary_row.get("seconds_per_1000_samples")
        return per_1000 * batch / 1000.0 if _number(per_1000) and batch else None
    steady = summary_row.get("steady_epoch_seconds")
    samples = record.get("train_samples")
    if not (_number(steady) and samples and batch):
        return None
    return steady / math.ceil(samples / float(batch))


def _number(value):
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def cell_row(found, description, record, summary_row):
    """One cell's row: its samples, seconds per step, each layer's share and
    seconds per step, and the sampler's cost (the sampled run's steady
    epoch over the timed repeats' median)."""
    row = {column: record.get(column) for column in matrix.CELL if column != "machine"}
    row["machine"] = record.get("machine")
    row["task"] = record.get("task")
    parallel = record.get("parallel") or {}
    row["accelerator"] = parallel.get("accelerator", "cpu") if record.get("devices") else "cpu"
    row["samples"] = found["samples"]
    row["frames"] = (
        "Python and native" if description.get("native_frames", True) is True else "Python"
    )
    row["reason"] = description.get("reason")
    step = seconds_per_step(record, summary_row)
    row["ms_per_step"] = 1000.0 * step if step else None
    for layer in LAYERS:
        share = found["layers"].get(layer, 0) / found["samples"] if found["samples"] else None
        row[layer + "_share"] = share
        row[layer + "_ms"] = share * row["ms_per_step"] if share is not None and step else None
    # the sampled run's steady state over the timed runs' median: its steady
    # epoch, or its seconds per 1,000 samples in batches (inference)
    measure = (
        "seconds_per_1000_samples" if record.get("task") == "infer" else "steady_epoch_seconds"
    )
    timed, sampled = summary_row.get(measure), record.get(measure)
    row["sampled_over_timed"] = sampled / timed if _number(timed) and _number(sampled) else None
    return row


def table(rows):
    columns = list(matrix.CELL) + ["accelerator", "task", "samples", "frames", "ms_per_step"]
    columns += [layer + "_share" for layer in LAYERS] + [layer + "_ms" for layer in LAYERS]
    columns += ["sampled_over_timed", "reason"]
    return pd.DataFrame(rows, columns=columns)


def shown(found):
    """The table as people read it: per cell, ms per step and each layer's
    share in percent."""
    view = found[["dataset", "model", "backend"] + matrix.shown_dimensions(found)]
    view = view.assign(
        ms_per_step=found["ms_per_step"], samples=found["samples"], frames=found["frames"]
    )
    for layer in LAYERS:
        view[LAYER_NAMES[layer] + " %"] = (100.0 * found[layer + "_share"]).round(1)
    view["sampled / timed"] = found["sampled_over_timed"]
    view["no python stacks"] = found["reason"]
    return view


CAPTION = (
    "Where each cell's steady state spends its time, from its python stacks: one extra run of "
    "the cell under py-spy (Python and native frames; never one of the timed repeats): each "
    "layer's share of the samples inside the clock, and the timed runs' milliseconds per "
    "training step or timed inference call. Compute kernels: native frames of the math "
    "libraries (MKL, oneDNN, Eigen, cuDNN, ...); framework: its Python and C++ outside them; "
    "waiting: on a device, a lock or the framework's own threads (whose work the sampled "
    "thread does not show). 'sampled / timed': the sampled run's steady epoch over the timed "
    "median (the sampler's cost). TensorFlow's and JAX's python stacks have Python frames only "
    "(py-spy's native unwinding through their libraries costs 20 to 90 times the step): their "
    "compute shows as waiting or as the framework."
)


def gaps(found, hot_spots, limit=3):
    """For every sampled backend against its workload's fastest at the same
    point and task: how much slower, which layers hold the difference (each
    layer's share of it), and the hot spots that take most of its time in
    those layers. ``hot_spots``: {cell key: {hot spot: samples}}."""
    rows = []
    group = [c for c in matrix.CELL if c != "backend"] + ["task"]
    usable = found[found["ms_per_step"].notna() & (found["samples"] > 0)]
    for _, cells in usable.groupby(group, dropna=False):
        fastest = cells.loc[cells["ms_per_step"].idxmin()]
        for _, cell in cells.iterrows():
            if cell["backend"] == fastest["backend"]:
                continue
            difference = cell["ms_per_step"] - fastest["ms_per_step"]
            if difference <= 0:
                continue
            parts = {
                layer: cell[layer + "_ms"] - fastest[layer + "_ms"]
                for layer in LAYERS
                if _number(cell[layer + "_ms"]) and _number(fastest[layer + "_ms"])
            }
            grown = sorted((value, layer) for layer, value in parts.items() if value > 0)[::-1]
            described = ", ".join(
                "{:+.0f} % in {}".format(100.0 * value / difference, LAYER_NAMES[layer])
                for value, layer in grown[:limit]
            )
            spots = hot_spots.get(key_of(cell), {})
            total = float(sum(spots.values())) or 1.0
            top = sorted(spots.items(), key=lambda item: -item[1])[:limit]
            rows.append(
                {
                    **{c: cell[c] for c in group},
                    "backend": cell["backend"],
                    "fastest": fastest["backend"],
                    "times_slower": cell["ms_per_step"] / fastest["ms_per_step"],
                    "extra_ms_per_step": difference,
                    "where": described,
                    "hot_spots": "; ".join(
                        "{} ({:.0f} %)".format(name, 100.0 * count / total) for name, count in top
                    ),
                }
            )
    columns = group + ["backend", "fastest", "times_slower", "extra_ms_per_step", "where"]
    return pd.DataFrame(rows, columns=columns + ["hot_spots"])


GAPS_CAPTION = (
    "Why a backend is slower than its workload's fastest at the same point: the extra "
    "milliseconds per step, split by layer (each layer's part of the difference, from the "
    "python stacks' shares times the timed steps; where a layer took less time than in the "
    "fastest, the others add to more than 100 %), and the hot spots that take most of its "
    "sampled time (the innermost named frame, and the Python function that called it)."
)


def key_of(cell):
    """A cell's key in the hot spots' map."""
    return tuple(str(cell[c]) for c in matrix.CELL)


def plot(found, dataset, model, path):
    """``figure_of``, written to ``path``."""
    plots_style.save(figure_of(found, dataset, model), path)


def figure_of(found, dataset, model):
    """One workload's backends as stacked bars: milliseconds per step by layer."""
    cells = found[(found["dataset"] == dataset) & (found["model"] == model)]
    return plots_stacked_bars.stacked_bars_figure(
        cells[cells["ms_per_step"].notna()],
        [(layer + "_ms", LAYER_NAMES[layer], None) for layer in LAYERS],
        "ms per training step or timed inference call, by layer",
        "{} / {}: where the time goes".format(dataset, model),
        empty="no python stacks",
    )


def flame_graph(stacks, title, path, depth=30, minimum=0.005):
    """``flame_graph_figure``, written to ``path``."""
    plots_style.save(flame_graph_figure(stacks, title, depth, minimum), path)


def flame_graph_figure(stacks, title, depth=30, minimum=0.005):
    """The clocked samples as a flame graph (an icicle: the clock at the top,
    callees below, each frame as wide as its samples), each frame coloured by
    the layer it belongs to (``frame_layer``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tree = {}
    total = 0
    for frames, count in stacks:
        inside = clocked(frames)
        if inside is None:
            continue
        total += count
        node = tree
        for found in inside[:depth]:
            entry = node.setdefault(found.label(), [0, {}, frame_layer(found)])
            entry[0] += count
            node = entry[1]
    figure, axis = plots_style.figure_and_axes(dpi=100, figsize=(14, 7))
    colours = {layer: plt.get_cmap("tab10")(index) for index, layer in enumerate(LAYERS)}

    def draw(node, start, level):
        for label, (count, children, layer) in sorted(node.items()):
            width = count / float(total)
            if width >= minimum:
                axis.barh(-level, width, left=start, height=0.95, color=colours[layer], alpha=0.8)
                if width > 0.06:
                    axis.text(
                        start + 0.002, -level, label[: int(width * 160)], va="center", fontsize=6
                    )
                draw(children, start, level + 1)
            start += width

    if total:
        draw(tree, 0.0, 0)
    else:
        axis.text(0.5, 0.5, "no sample inside the clock", ha="center", transform=axis.transAxes)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colours[layer]) for layer in LAYERS]
    axis.legend(handles, [LAYER_NAMES[layer] for layer in LAYERS], fontsize=7, loc="lower right")
    axis.set_yticks([])
    axis.set_xlim(0, 1)
    axis.set_xlabel("share of the clocked samples ({} samples)".format(total))
    axis.set_title(title)
    figure.tight_layout()
    return figure
