"""Run records -> tidy tables. Reads only run.json files (the contract).

- ``metrics``: one row per run.
- ``epochs``: one row per run and epoch.
- ``summary``: one row per cell: medians over the repeats with a
  distribution-free confidence interval for the median, the repeats'
  spread (noisy flag) and the cell against the fastest backend of its
  workload (``dlbench.analysis.stats``).
"""

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from dlbench import catalog
from dlbench.analysis import hidden_settings, stats
from dlbench.plan import matrix, paths
from dlbench.plan.paths import PathLike
from dlbench.record import contract, fields, record_schema
from dlbench.record.contract import Record
from dlbench.record.fields import CellStatus, Status

CELL = list(matrix.CELL)
# Cell columns that are names, not numbers ("all" threads): read back as text.
TEXT_COLUMNS = ["machine"] + [d.name for d in matrix.DIMENSIONS if d.parse is not int]
RUN = CELL + ["repeat"]


def load_records(files: Iterable[PathLike]) -> List[Record]:
    """The records in ``files``, each checked against the run record's
    schema; one that does not parse or conform stands in the tables as an
    ``invalid`` run of the cell its path names, the reason naming the path
    and the fields."""
    loaded = []
    for path in files:
        try:
            with open(path) as handle:
                record = contract.read(json.load(handle))
            found = record_schema.problems(record)
        except (OSError, ValueError) as error:
            record, found = None, ["(file): {}".format(error)]
        # no problem found: the record conforms (a dict, never None)
        loaded.append(invalid_record(path, record, found) if found or record is None else record)
    return loaded


def invalid_record(path: PathLike, record: Any, problems: List[str]) -> Record:
    """The stand-in for a record that breaks the schema."""
    cell = paths.run_of_path(path)
    if cell is None:
        raise ValueError("{}: not a run record's path ({})".format(path, paths.RUN_DIR))
    task = record.get("task") if isinstance(record, dict) else None
    reason = "invalid run record {}: {}".format(path, "; ".join(problems[:5]))
    if len(problems) > 5:
        reason += "; and {} more".format(len(problems) - 5)
    print(reason)
    return dict(
        cell,
        record_version=contract.RECORD_VERSION,
        task=task if task in catalog.TASKS else "train",
        status=Status.INVALID,
        error=reason,
        reason=reason,
    )


def read_table(path: PathLike) -> pd.DataFrame:
    """A table written by this module, its cell columns as they were written."""
    return pd.read_csv(path, dtype={column: str for column in TEXT_COLUMNS})


def _cell_of(record):
    """The record's cell and repeat (``matrix.record_cell``), text columns as text."""
    cell = matrix.record_cell(record)
    return {key: str(value) if key in TEXT_COLUMNS else value for key, value in cell.items()}


def labels(frame: pd.DataFrame, columns: Sequence[str]) -> pd.Series:
    """Each row's values of ``columns`` as people read them, joined: the
    machine's name, the devices as hardware, other dimensions by their label."""
    if not len(frame):
        return pd.Series([], index=frame.index, dtype=object)
    # every dimension but the devices (a label of their own) has a label
    by_name = {d.name: d.label for d in matrix.DIMENSIONS if d.label is not None}
    parts = []
    for column in columns:
        if column == "devices":
            parts.append(
                [device_label(d, a) for d, a in zip(frame["devices"], frame["accelerator"])]
            )
        elif column == "machine":
            parts.append(frame["machine"].astype(str).tolist())
        else:
            parts.append(frame[column].map(by_name[column].format).tolist())
    return pd.Series([", ".join(values) for values in zip(*parts)], index=frame.index)


def point_labels(frame: pd.DataFrame) -> pd.Series:
    """Each row's point (its dimensions' values) as tables and plots name it
    (``matrix.shown_dimensions``)."""
    return labels(frame, matrix.shown_dimensions(frame))


def _error_line(text):
    """The last line of an error tail: the exception and its message."""
    return text.strip().splitlines()[-1] if isinstance(text, str) and text.strip() else None


def _initial_weights(record):
    """ "shared", or "OWN: why" for a run that could not load the shared
    initial weights; None where there were none to load."""
    found = record.get("initial_weights")
    if not found:
        return None
    if not found["loaded"]:
        return "OWN: {}".format(found.get("reason") or "?")
    trained = found.get("trained")
    if trained:
        return "shared, trained ({} epochs on {})".format(
            trained.get("hyper", {}).get("epochs", "?"), trained.get("backend", "?")
        )
    return "shared"


def metrics(records: Iterable[Record]) -> pd.DataFrame:
    rows = []
    for record in records:
        runtime = record.get("runtime") or {}
        settings = record.get("settings") or {}
        rows.append(
            {
                **_cell_of(record),
                "task": record["task"],
                "node": record.get("node"),
                "environment": record.get("environment_name"),
                "env_mode": (record.get("environment_check") or {}).get("mode"),
                "env_mismatches": _mismatches(record),
                "manifest": hidden_settings.of_record(record),
                "initial_weights": _initial_weights(record),
                "accelerator": _accelerator(record),
                "status": record["status"],
                "error": record.get("reason") or _error_line(record.get("error")),
                "parameters": record.get("parameters"),
                "epochs": len(record.get("epochs") or []),
                **{metric.name: metric.value(record) for metric in fields.METRICS},
                **_cold_start(record),
                **_energy(record),
                "batch_size": (record.get("hyper") or {}).get("batch_size"),
                "per_device_batch": (record.get("parallel") or {}).get("per_device_batch"),
                "learning_rate": (record.get("parallel") or {}).get("learning_rate"),
                "batch_scaling": (record.get("parallel") or {}).get("batch_scaling"),
                "seed": record.get("seed"),
                "threads_used": runtime.get("threads"),
                "jit_compile": settings.get("jit_compile"),
                "compile_cache_warm": compile_cache_warm(settings),
                "precision_ran": _precision_ran(settings),
                "framework": runtime.get("framework"),
                "framework_version": runtime.get("framework_version"),
                "keras_version": runtime.get("keras"),
                "python": runtime.get("python"),
                "numpy": runtime.get("numpy"),
                "cuda": runtime.get("cuda"),
                "cudnn": runtime.get("cudnn"),
                "cpu_model": runtime.get("cpu_model"),
                "cpu_precision_flags": cpu_precision_flags(runtime),
                "cpu_count": runtime.get("cpu_count"),
                "gpu_model": _gpu_field(runtime, "name"),
                "gpu_driver": _gpu_field(runtime, "driver"),
                "matmul_probe_gflops": (runtime.get("matmul_probe") or {}).get("gflops"),
                "hostname": runtime.get("hostname"),
                "load_average_at_start": (runtime.get("load_average_at_start") or [None])[0],
                "started": record.get("started"),
            }
        )
    return pd.DataFrame(rows).sort_values(RUN, ignore_index=True)


COLD_START = (
    "launch",
    "framework_setup",
    "data_load",
    "model_build",
    "first_step",
    "first_epoch_rest",
    "first_call",
    "warmup_rest",
    "to_first_step",
)


def _cold_start(record):
    """The record's split of what came before the steady state
    (dlbench.analysis.cold_start), a column a stage; empty in older records."""
    cold = record.get("cold_start") or {}
    return {stage + "_seconds": cold.get(stage + "_seconds") for stage in COLD_START}


ENERGY = (
    "joules_steady_epoch",
    "joules_per_sample",
    "joules_per_1000_samples",
    "watts_steady",
)


def _energy(record):
    """The record's energy (dlbench.run.energy), GPU and CPU, a column each
    measure; empty where the machine had no counter."""
    found = record.get("energy") or {}
    columns = {
        "{}_{}".format(kind, measure): found.get("{}_{}".format(kind, measure))
        for kind in ("gpu", "cpu")
        for measure in ENERGY
    }
    busy = found.get("gpu_utilisation_percent_at_end")
    columns["gpu_utilisation_percent"] = sum(busy) / len(busy) if busy else None
    return columns


def _first(runs: pd.DataFrame, column: str) -> Any:
    """The first value ``runs`` hold in ``column``, or None."""
    if column not in runs:
        return None
    found = runs[column].dropna()
    return found.iloc[0] if len(found) else None


def compile_cache_warm(settings: Mapping[str, Any]) -> Optional[bool]:
    """Whether the run found the compiled code of earlier runs in its
    environment (a shorter first epoch than a fresh machine's): Theano's and
    PyTensor's ops, Inductor's kernels where the run compiled with it, JAX's
    programs where the cache is on. None where the run used no such cache."""
    if "theano_cache_warm" in settings:
        return settings["theano_cache_warm"]
    if "jax_compilation_cache" in settings:
        return settings["compile_cache_warm"] if settings["jax_compilation_cache"] else None
    if "torch_compile_cache" in settings:  # native torch says torch_compile, Keras jit_compile
        compiled = settings.get("torch_compile", settings.get("jit_compile")) is True
        return settings["compile_cache_warm"] if compiled else None
    return settings.get("compile_cache_warm")


def _precision_ran(settings):
    """What the run computed in, as its adapter found it: the compute and
    variable dtypes (OpenVINO: its inference precision); None where the
    adapter does not say (float32 backends without a precision mode)."""
    found = settings.get("precision")
    if isinstance(found, dict) and found.get("compute_dtype"):
        text = "{} compute, {} variables".format(found["compute_dtype"], found["variable_dtype"])
        return text + (", loss scaling" if found.get("loss_scaling") else "")
    if settings.get("inference_precision"):
        return "{} (OpenVINO)".format(settings["inference_precision"])
    return None


def cpu_precision_flags(runtime: Mapping[str, Any]) -> Optional[str]:
    """The CPU's reduced-precision instructions as one text, or why they are
    not known."""
    found = " ".join(runtime.get("cpu_precision_flags") or [])
    unreadable = runtime.get("cpu_flags_unreadable")
    return found or ("not read: " + unreadable if unreadable else None)


def _mismatches(record):
    """How the run's environment differs from its env file, as one text:
    empty where it matches, None where nobody checked (env_mode current,
    records of version 1)."""
    found = (record.get("environment_check") or {}).get("mismatches")
    return None if found is None else "; ".join(found)


def _gpu_field(runtime, field):
    """The run's GPU models (or drivers), distinct, joined; None on the CPU."""
    found = sorted({gpu.get(field) for gpu in runtime.get("gpus") or [] if gpu.get(field)})
    return ", ".join(found) or None


def _accelerator(record):
    return (record.get("parallel") or {}).get("accelerator", "cpu")


def epochs(records: Iterable[Record]) -> pd.DataFrame:
    rows = []
    for record in records:
        for epoch in record.get("epochs") or []:
            rows.append({**_cell_of(record), "accelerator": _accelerator(record), **epoch})
    columns = RUN + ["accelerator"] + list(contract.EPOCH_COLUMNS)
    return pd.DataFrame(rows, columns=columns)


def latencies(records: Iterable[Record]) -> pd.DataFrame:
    """One row per timed single-sample inference call."""
    rows = []
    for record in records:
        for call, milliseconds in enumerate(record.get("latencies_ms") or []):
            rows.append(
                {
                    **_cell_of(record),
                    "accelerator": _accelerator(record),
                    "call": call,
                    "ms": milliseconds,
                }
            )
    return pd.DataFrame(rows, columns=RUN + ["accelerator", "call", "ms"])


# The headline figure of each task, summarised with its confidence interval.
HEADLINE = {"train": "steady_epoch_seconds", "infer": "latency_p50_ms"}


def summary(
    metrics_frame: pd.DataFrame,
    level: float = 0.95,
    not_applicable: Iterable[Dict[str, Any]] = (),
    tolerances: Optional[Mapping[Tuple[str, str], float]] = None,
    noise_threshold: float = 0.1,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """One row per cell. ``not_applicable`` cells (the matrix left them out:
    the backend cannot do the task) get a row saying why; ``tolerances``
    maps (dataset, model) to the accuracy parity tolerance; a cell whose
    repeats vary more than ``noise_threshold`` (coefficient of variation) is
    noisy; differences from the fastest backend are tested at ``alpha``."""
    rows = []
    for cell, runs in metrics_frame.groupby(CELL, sort=True):
        ok = runs[runs["status"] == Status.OK]
        task = runs["task"].iloc[0]
        headline, low, high, coverage = stats.median_ci(ok[HEADLINE[task]].tolist(), level)
        spread = stats.coefficient_of_variation(ok[HEADLINE[task]].tolist())
        failures = runs[runs["status"] != Status.OK]
        if len(ok) == len(runs):
            status = CellStatus.OK
        elif len(ok):
            status = CellStatus.PARTIAL
        else:
            status = CellStatus(failures["status"].iloc[0])

        def median(column, ok=ok):
            return ok[column].median() if len(ok) and column in ok else None

        rows.append(
            {
                **dict(zip(CELL, cell)),
                "task": task,
                "accelerator": runs["accelerator"].iloc[0],
                "status": status,
                "runs": len(runs),
                "runs_ok": len(ok),
                "error": failures["error"].iloc[0] if len(failures) else None,
                "parameters": ok["parameters"].iloc[0] if len(ok) else None,
                "headline": HEADLINE[task],
                "headline_median": headline,
                "headline_ci_low": low,
                "headline_ci_high": high,
                "ci_level": coverage,
                "headline_cv": spread,
                "noisy": stats.noisy(spread, noise_threshold),
                **{metric.name: median(metric.name) for metric in fields.summarised()},
                "jit_compile": ok["jit_compile"].iloc[0] if len(ok) else None,
                "precision_ran": _first(ok, "precision_ran"),
                "threads_used": median("threads_used"),
                "node": ", ".join(sorted(set(runs.get("node", pd.Series()).dropna()))) or None,
                "env_mismatches": "; ".join(
                    sorted(
                        {text for text in runs.get("env_mismatches", pd.Series()).dropna() if text}
                    )
                )
                or None,
                "initial_weights": "; ".join(
                    sorted(set(runs.get("initial_weights", pd.Series()).dropna()))
                )
                or None,
                "manifest": _first(ok, "manifest"),
            }
        )
    for cell in not_applicable:
        rows.append(
            {
                **_cell_of(dict(cell, repeat=None)),
                "task": cell["task"],
                "accelerator": cell.get("accelerator"),
                "status": CellStatus.NOT_APPLICABLE,
                "runs": 0,
                "runs_ok": 0,
                "error": cell["reason"],
                "headline": HEADLINE[cell["task"]],
            }
        )
    frame = pd.DataFrame(rows, columns=summary_columns())
    frame = scaling(accuracy_parity(frame, tolerances or {}))
    frame = hidden_settings.flag(frame)
    pairs = stats.pairwise(metrics_frame, HEADLINE, alpha)
    return stats.against_fastest(pairs, frame).sort_values(CELL, ignore_index=True)


def scaling(frame: pd.DataFrame) -> pd.DataFrame:
    """Speed-up and scaling efficiency of training over device counts
    (devices >= 1; the CPU is other hardware): each backend's throughput
    against its own on the fewest devices measured, efficiency = speed-up /
    (devices / fewest). 1.0 is ideal scaling."""
    frame = frame.assign(speedup=float("nan"), scaling_efficiency=float("nan"))
    measured = frame[
        (frame["task"] == "train") & (frame["devices"] > 0) & frame["samples_per_second"].notna()
    ]
    for _, cells in measured.groupby(matrix.cell_columns("devices")):
        if len(cells) < 2:
            continue
        base = cells.loc[cells["devices"].idxmin()]
        speedup = cells["samples_per_second"] / base["samples_per_second"]
        frame.loc[cells.index, "speedup"] = speedup
        frame.loc[cells.index, "scaling_efficiency"] = speedup / (
            cells["devices"] / base["devices"]
        )
    return frame


def summary_columns() -> List[str]:
    """The summary's columns, the measured figures' from ``fields``."""
    return CELL + [
        "task",
        "accelerator",
        "status",
        "runs",
        "runs_ok",
        "error",
        "parameters",
        "headline",
        "headline_median",
        "headline_ci_low",
        "headline_ci_high",
        "ci_level",
        "headline_cv",
        "noisy",
        *(metric.name for metric in fields.summarised()),
        "jit_compile",
        "precision_ran",
        "threads_used",
        "node",
        "env_mismatches",
        "initial_weights",
        "manifest",
        "hidden_settings_differ",
    ]


def accuracy_parity(
    frame: pd.DataFrame, tolerances: Mapping[Tuple[str, str], float]
) -> pd.DataFrame:
    """Do backends reach the same model quality? Each trained cell's test
    accuracy (median over repeats) is compared with the median over the
    backends of the same workload and devices; a cell further away than the
    workload's tolerance is flagged. Needs two backends or more."""
    frame = frame.assign(
        accuracy_reference=float("nan"),
        accuracy_gap=float("nan"),
        accuracy_tolerance=float("nan"),
        accuracy_parity=None,
    )
    trained = frame[(frame["task"] == "train") & frame["test_accuracy"].notna()]
    for _, cells in trained.groupby(matrix.cell_columns("backend")):
        dataset, model = cells["dataset"].iloc[0], cells["model"].iloc[0]
        if len(cells) < 2 or (dataset, model) not in tolerances:
            continue
        reference = float(cells["test_accuracy"].median())
        tolerance = tolerances[(dataset, model)]
        gap = cells["test_accuracy"] - reference
        frame.loc[cells.index, "accuracy_reference"] = reference
        frame.loc[cells.index, "accuracy_gap"] = gap
        frame.loc[cells.index, "accuracy_tolerance"] = tolerance
        frame.loc[cells.index, "accuracy_parity"] = [
            "ok" if abs(value) <= tolerance + 1e-12 else "outside" for value in gap
        ]
    return frame


def device_label(devices: Union[int, str], accelerator: str = "gpu") -> str:
    if int(devices) == 0:
        return "CPU"
    if accelerator == "emulated-cpu":
        return "{} emulated dev".format(devices)
    return "{} GPU".format(devices)
