"""A training run's parts around its clocked epochs: the data it trains,
validates and scores on (``split``), each epoch's row and line, the
per-epoch CSV (``EpochLog``), the epochs' summary (the first epoch apart
from the steady state), the figures and scores after the last epoch and the
op profile's window. dlbench.run.harness runs the epochs on its clock between
them (``harness.train``). Importable on Python 3.6.
"""

import collections
import csv
import math
import statistics
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from dlbench.record import contract, fields
from dlbench.record.contract import Record
from dlbench.record.run_spec import RunSpec
from dlbench.run import compiles, energy, launch, op_profiling
from dlbench.run.run_data import epoch_order, first_samples, take, validation_split

if TYPE_CHECKING:
    from dlbench.run.backends.base import Adapter

# One epoch's row of the epoch log and the record (contract.EPOCH_COLUMNS).
Row = Dict[str, Any]


class EpochLog(object):
    """Per-epoch CSV written as the run goes, so progress is visible and a
    crashed run still shows how far it got."""

    def __init__(self, path: str, columns: Sequence[str] = contract.EPOCH_COLUMNS) -> None:
        self.handle = open(path, "w", newline="")
        self.writer = csv.DictWriter(self.handle, fieldnames=columns)
        self.writer.writeheader()

    def add(self, row: Row) -> None:
        self.writer.writerow(row)
        self.handle.flush()

    def close(self) -> None:
        self.handle.close()


class Split(collections.namedtuple("Split", "x_train y_train x_val y_val x_test y_test held_out")):
    """A training run's data: what it trains on, what it validates on after
    each epoch (``held_out``: the tail of the training data, else the test
    split) and the test split it is scored on at the end."""

    __slots__ = ()

    @property
    def samples(self) -> int:
        """The training samples an epoch orders, over all the processes."""
        return len(self.y_train)


def split(hyper: Dict[str, Any], data: Dict[str, Any]) -> Split:
    """The Split of ``data`` (run_data.load_dataset's) under the workload's
    ``train_samples`` (the first samples only) and ``validation_split`` (the
    fraction held out for validation, as Keras holds it out)."""
    x_train, y_train = data["x_train"], data["y_train_onehot"]
    x_test, y_test = data["x_test"], data["y_test_onehot"]
    if hyper.get("train_samples"):
        x_train, y_train = first_samples(x_train, y_train, hyper["train_samples"])
    if not hyper.get("validation_split"):
        return Split(x_train, y_train, x_test, y_test, x_test, y_test, False)
    (x_train, y_train), (x_val, y_val) = validation_split(
        x_train, y_train, hyper["validation_split"]
    )
    return Split(x_train, y_train, x_val, y_val, x_test, y_test, True)


def describe(spec: RunSpec, parameters: Optional[int], data: Split) -> None:
    """The run's first line: the model, its size and what it trains on."""
    print(
        "{} on {}: {} parameters, {} training samples ({} held out for validation), "
        "batch {}, {} epochs".format(
            spec.model,
            spec.backend,
            parameters,
            data.samples,
            len(data.y_val) if data.held_out else 0,
            spec.hyper["batch_size"],
            spec.hyper["epochs"],
        ),
        flush=True,
    )


class Epochs(object):
    """What the epoch loop leaves: each epoch's row, the joules and compiles
    of each (where its meter and ``counter`` read them), the samples an
    epoch drops so that every replica gets whole batches, and the first
    step's seconds (the adapter's, where it timed it)."""

    def __init__(self, counter: Optional[compiles.Counter]) -> None:
        self.counter = counter  # the adapter's compile counter; None where it has none
        self.rows: List[Row] = []
        self.joules: List[Any] = []  # each epoch's, as the meter reads them
        self.compiled: List[Tuple[int, float, List[str]]] = []  # each epoch's (Counter.since)
        self.dropped = 0
        self.first_step_seconds: Optional[float] = None
        # Where the run measures time to accuracy: its evaluations every so many steps.
        self.evaluations: Optional["Evaluations"] = None

    def cold_start(self) -> Dict[str, Optional[float]]:
        """The first step (trace, compile, autotune) and the rest of the
        first epoch: the cold start's stages of a training run."""
        found = {"first_step_seconds": self.first_step_seconds}
        if self.first_step_seconds is not None:
            found["first_epoch_rest_seconds"] = self.rows[0]["seconds"] - self.first_step_seconds
        return found


class Evaluations(object):
    """A run's evaluations on the held-out data every ``every`` optimizer
    steps, off the clock, for its time to accuracy: each at the steps taken
    so far (global batches) and the seconds the training clock has run so
    far (the first epoch's compiles and warm-up included, the evaluations
    not), and the first (step 0) before any training."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.step = 0
        self.training_seconds = 0.0
        self.rows: List[Row] = []

    def due(self) -> int:
        """Steps to the next evaluation."""
        return self.every - self.step % self.every

    def trained(self, steps: int, seconds: float) -> bool:
        """Count ``steps`` more that took ``seconds`` on the clock; whether
        an evaluation is due now."""
        self.step += steps
        self.training_seconds += seconds
        return self.step % self.every == 0

    def add(self, epoch: int, loss: float, accuracy: float) -> None:
        self.rows.append(
            {
                "step": self.step,
                "epoch": epoch,
                "training_seconds": self.training_seconds,
                "val_loss": loss,
                "val_accuracy": accuracy,
            }
        )


def chunks(samples: int, batch_size: int, evaluations: Evaluations) -> List[Tuple[slice, int]]:
    """An epoch of ``samples`` (whole batches of ``batch_size``, the last
    maybe short) cut where evaluations fall due: each part's samples and
    steps."""
    steps = int(math.ceil(samples / float(batch_size)))
    parts, done, due = [], 0, evaluations.due()
    while done < steps:
        taken = min(due, steps - done)
        parts.append((slice(done * batch_size, min(samples, (done + taken) * batch_size)), taken))
        done, due = done + taken, evaluations.every
    return parts


def joined(parts: List[Tuple[Dict[str, float], float, int]]) -> Tuple[Dict[str, float], float]:
    """One epoch's adapter result and wall time from its parts' (result,
    wall, steps): the seconds and wall times added, the loss and accuracy
    the parts' means weighted by their steps."""
    steps = sum(count for _, _, count in parts)
    step = {
        "seconds": sum(result.get("seconds", wall) for result, wall, _ in parts),
        "loss": sum(result["loss"] * count for result, _, count in parts) / steps,
        "accuracy": sum(result["accuracy"] * count for result, _, count in parts) / steps,
    }
    return step, sum(wall for _, wall, _ in parts)


def epoch_row(epoch: int, step: Dict[str, float], wall: float) -> Row:
    """The row of epoch ``epoch`` (from 0) that ``step`` (the adapter's
    result) took ``wall`` seconds on the clock for, its validation to come."""
    return {
        "epoch": epoch + 1,
        "seconds": step.get("seconds", wall),
        "wall_seconds": wall,
        "loss": step["loss"],
        "accuracy": step["accuracy"],
        "val_loss": None,
        "val_accuracy": None,
    }


def print_epoch(row: Row, epochs: int) -> None:
    print(
        "epoch {}/{}: {:.3f} s (call {:.3f} s) loss {:.4f} acc {:.4f} val_acc {}".format(
            row["epoch"],
            epochs,
            row["seconds"],
            row["wall_seconds"],
            row["loss"],
            row["accuracy"],
            "-" if row["val_accuracy"] is None else "{:.4f}".format(row["val_accuracy"]),
        ),
        flush=True,
    )


def epoch_summary(seconds: List[float], compiles_per_epoch: Optional[List[int]] = None) -> Record:
    """First epoch (graph build, JIT, autotune) apart from steady state, the
    median of the later epochs. With one epoch there is no steady state.
    Where the framework counts its compiles (``compiles_per_epoch``), a later
    epoch that compiled again is not steady state either, unless every
    later epoch did; ``steady_epochs`` says which epochs the median took."""
    found: Record = {}
    if not seconds:
        fields.put(found, "first_epoch_seconds", None)
        fields.put(found, "steady_epoch_seconds", None)
        return found
    later = list(range(1, len(seconds)))
    if compiles_per_epoch is not None:
        quiet = [index for index in later if compiles_per_epoch[index] == 0]
        later = quiet or later
    fields.put(found, "first_epoch_seconds", seconds[0])
    steady = statistics.median(seconds[i] for i in later) if later else None
    fields.put(found, "steady_epoch_seconds", steady)
    if later:
        found["steady_epochs"] = [index + 1 for index in later]
    return found


def steady_seconds(result: Record) -> Optional[float]:
    """The steady epoch's seconds, or the first's where there is no steady
    state (one epoch)."""
    return fields.value_of(result, "steady_epoch_seconds") or fields.value_of(
        result, "first_epoch_seconds"
    )


def figures(epochs: Epochs, data: Split, meter: Any) -> Record:
    """The figures of the epochs: their rows and compiles, the summary, the
    throughput of the steady state, and its energy where ``meter`` read it."""
    seconds = [row["seconds"] for row in epochs.rows]
    found = {"epochs": epochs.rows, "compiles": compiles.per_epoch(epochs.counter, epochs.compiled)}
    found.update(epoch_summary(seconds, found["compiles"] and found["compiles"]["per_epoch"]))
    steady = steady_seconds(found)
    trained = data.samples - epochs.dropped  # per epoch, over all replicas
    fields.put(found, "samples_per_second", trained / steady if steady else None)
    fields.put(found, "samples_dropped_per_epoch", epochs.dropped)
    if meter:
        found["energy"] = energy.per_epoch(
            meter, epochs.joules, trained, seconds, found.get("steady_epochs")
        )
    if epochs.evaluations is not None:
        found["evaluate_every"] = epochs.evaluations.every
        found["evaluations"] = epochs.evaluations.rows
    return found


def scores(adapter: "Adapter", model: Any, data: Split, batch_size: int, last_row: Row) -> Record:
    """After the last epoch, off the clock: how far the replicas drifted
    apart, the recurrent operators that ran (where the settings chose
    them), and the test split's scores (the last validation's where the
    test split validated)."""
    found: Record = {}
    fields.put(found, "replica_max_abs_weight_diff", adapter.replica_divergence(model))
    observe = adapter.recurrent_ops
    if observe and "recurrent_kernels" in adapter.applied_settings():
        found["recurrent_ops"] = observe(model, take(data.x_test, slice(0, batch_size)))
    if data.held_out:
        loss, accuracy = adapter.evaluate(model, data.x_test, data.y_test, batch_size)
        found["validation_samples"] = len(data.y_val)
    else:
        loss, accuracy = last_row["val_loss"], last_row["val_accuracy"]
    fields.put(found, "test_loss", loss)
    fields.put(found, "test_accuracy", accuracy)
    found["train_samples"], found["test_samples"] = data.samples, len(data.y_test)
    return found


def op_window(
    spec: RunSpec, adapter: "Adapter", model: Any, data: Split, steady: Optional[float]
) -> op_profiling.Window:
    """The op profile's window (op_profiling.WINDOW) of a run in one
    process (the op profile takes one): the next epoch's first steps in the
    shared order, as many as op_profiling.window_steps takes at the
    ``steady`` epoch's pace."""
    hyper = spec.hyper
    batch_size = hyper["batch_size"]
    order, _ = launch.shard_epoch(
        epoch_order(spec.seed, hyper["epochs"], data.samples),
        batch_size,
        launch.parallel_of(spec)["replicas"],
        0,
        1,
    )
    steps = op_profiling.window_steps(
        steady and steady / math.ceil(data.samples / float(batch_size)), len(order) // batch_size
    )
    x_window = take(data.x_train, order[: steps * batch_size])
    y_window = data.y_train[order[: steps * batch_size]]
    return (lambda: adapter.train_epoch(model, x_window, y_window, batch_size), steps, model)
