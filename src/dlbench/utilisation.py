"""Achieved FLOP/s and model FLOP utilisation (MFU) of every measured cell.

Achieved = analytic FLOPs per sample (dlbench.flops; counted by
dlbench.flops_count for the user's own models) x samples per second:
training counts the forward and backward pass at the steady-state training
throughput; inference counts the forward pass at the batched throughput
(seconds per 1,000 samples). MFU = achieved / peak. The peak of a GPU cell
is the datasheet's FP32 rate per GPU (workflow/resources/gpu_peaks.csv)
times the device count; of a CPU cell (emulated devices too: they share the
CPU) the fastest float32 matrix-multiply probe of any run on the same
machine and threads: load from other work and an old environment's BLAS can
only slow a probe down, so the fastest is the closest to what the CPU can
do (the median of all runs understated it enough that a well-built
framework ran at "135%" of it).
"""

import pandas as pd

from dlbench import hardware, matrix

CELL = list(matrix.CELL)
COLUMNS = CELL + [
    "accelerator",
    "task",
    "forward_gflops_per_sample",
    "training_gflops_per_sample",
    "samples_per_second",
    "achieved_gflops",
    "peak_gflops",
    "peak_source",
    "mfu",
]


def _peak(cell, runs, every_run, peaks):
    """The cell's peak GFLOP/s and where it comes from. A CPU's is the
    machine's: the fastest probe of any run on the same host and CPU with
    the same threads, whichever environment ran it (the probe goes through
    each environment's numpy, and an old numpy's BLAS is slower than the
    machine; the environment table shows each one's)."""
    if cell["accelerator"] == "gpu" and int(cell["devices"]) > 0:
        models = runs["gpu_model"].dropna()
        row = hardware.gpu_peak(models.iloc[0], peaks) if len(models) else None
        if row is None:
            return None, "no peak for GPU {!r}".format(models.iloc[0] if len(models) else None)
        devices = int(cell["devices"])
        return (
            row["fp32_tflops"] * 1000 * devices,
            "{} x {} FP32 {:g} TFLOP/s ({})".format(
                devices, row["gpu"], row["fp32_tflops"], row["source"]
            ),
        )
    machine = runs[["hostname", "cpu_model", "threads_used"]].dropna().drop_duplicates()
    if not len(machine):
        return None, "no matmul probe recorded"
    host, cpu, threads = machine.iloc[0]
    probes = every_run[
        (every_run["hostname"] == host)
        & (every_run["cpu_model"] == cpu)
        & (every_run["threads_used"] == threads)
    ]["matmul_probe_gflops"].dropna()
    if not len(probes):
        return None, "no matmul probe recorded"
    return probes.max(), (
        "CPU float32 matmul probe on {}, {} thread(s): fastest of its {} runs".format(
            host, int(threads), len(probes)
        )
    )


def table(summary, metrics, per_sample, peaks):
    """``per_sample`` maps (dataset, model) to flops.per_sample's dict."""
    rows = []
    measured = summary[summary["status"].isin(["ok", "partial"])]
    ok = metrics[metrics["status"] == "ok"]
    for _, cell in measured.iterrows():
        flops = per_sample.get((cell["dataset"], cell["model"]))
        if flops is None:
            continue
        runs = ok[(ok[CELL] == cell[CELL].tolist()).all(axis=1)]
        if cell["task"] == "train":
            rate = cell["samples_per_second"]
            achieved = flops["training"] * rate / 1e9
        else:
            rate = 1000.0 / cell["seconds_per_1000_samples"]
            achieved = flops["forward"] * rate / 1e9
        peak, source = _peak(cell, runs, ok, peaks)
        rows.append(
            {
                **{key: cell[key] for key in CELL + ["accelerator", "task"]},
                "forward_gflops_per_sample": flops["forward"] / 1e9,
                "training_gflops_per_sample": flops["training"] / 1e9,
                "samples_per_second": rate,
                "achieved_gflops": achieved,
                "peak_gflops": peak,
                "peak_source": source,
                "mfu": achieved / peak if peak else None,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


CAPTION = (
    "Analytic FLOPs per sample (2 x multiply-adds of the dense, convolution and recurrent "
    "matrix products, from the layer shapes; training = forward + backward as frameworks "
    "compute it; for a model of your own, counted by PyTorch's FLOP counter on the model "
    "Keras builds, same convention), achieved GFLOP/s (training: x steady-state samples per "
    "second; inference: forward x batched samples per second) and model FLOP utilisation "
    "(MFU) = achieved / peak. "
    "Peak: FP32 datasheet rate x GPUs for GPU cells (TF32 or half precision would allow more), "
    "for CPU cells the fastest float32 matrix-multiply probe of any run on the machine with "
    "the same threads. Above 100 % means the cell did not compute in float32. Element-wise work, "
    "data loading and framework overhead count as time but not as FLOPs, so small models score "
    "low."
)


def shown(frame):
    return frame.assign(mfu=[None if pd.isna(v) else "{:.1%}".format(v) for v in frame["mfu"]])
