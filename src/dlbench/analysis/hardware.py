"""What the numbers were measured on: the hardware and software of every
backend's runs, and the peak rates that utilisation is measured against."""

import re

import pandas as pd

from dlbench.record.fields import Status

ENVIRONMENT_COLUMNS = {
    "python": "Python",
    "framework": "framework",
    "framework_version": "version",
    "keras_version": "Keras",
    "numpy": "NumPy",
    "cuda": "CUDA",
    "cudnn": "cuDNN",
    "cpu_model": "CPU",
    "cpu_precision_flags": "CPU reduced-precision instructions",
    "cpu_count": "CPUs",
    "threads_used": "threads",
    "gpu_model": "GPU",
    "gpu_driver": "driver",
    "hostname": "host",
    "env_mode": "environment from",
    "env_mismatches": "differs from the env file",
}


def _distinct(values):
    found = sorted({str(value) for value in values if pd.notna(value) and str(value) != ""})
    return ", ".join(found) if found else None


def environment_table(metrics_frame):
    """One row per backend environment and accelerator: the versions and
    machines its runs recorded (distinct values joined where runs differ),
    and the median of the runs' CPU matrix-multiply probe."""
    rows = []
    keys = ["machine", "backend", "environment", "accelerator"]
    for key, runs in metrics_frame.groupby(keys, dropna=False):
        ok = runs[runs["status"] == Status.OK]
        shown = ok if len(ok) else runs
        row = dict(zip(keys, key))
        row.update(
            {
                label: _distinct(shown[column]) if column in shown else None
                for column, label in ENVIRONMENT_COLUMNS.items()
            }
        )
        row["CPU matmul GFLOP/s"] = ok["matmul_probe_gflops"].median() if len(ok) else None
        row["runs"] = len(runs)
        row["runs ok"] = len(ok)
        rows.append(row)
    table = pd.DataFrame(rows)
    if len(table) and table["machine"].nunique() == 1:
        return table.drop(columns=["machine"])  # one machine: as it always looked
    return table


def gpu_peak(gpu_model, peaks):
    """The first row of the peak table whose pattern matches the GPU model
    as nvidia-smi names it, or None."""
    if not isinstance(gpu_model, str):
        return None
    for _, row in peaks.iterrows():
        if re.search(row["pattern"], gpu_model):
            return row
    return None


ENVIRONMENT_CAPTION = (
    "Hardware and software of every backend's runs on every machine, as the run records give "
    "them: Python, the framework and its version, Keras, NumPy, CUDA and cuDNN as the "
    "framework reports them "
    "(– on CPU builds), the CPU model and count, the threads the framework was pinned to, the "
    "GPUs and driver from nvidia-smi, and the median of a float32 matrix-multiply probe "
    "(1024 x 1024, numpy's BLAS on the run's threads) recorded with each run. Environment from: "
    "conda or venv (built from the backend's env file), existing (an interpreter named in "
    "existing_environments, checked before the runs) or current (the workflow's own, not "
    "checked); differs from the env file: what an existing interpreter holds that its env "
    "file does not pin (those numbers are not from the pinned versions)."
)
