"""Achieved FLOP/s and model FLOP utilisation (MFU) of every measured cell.

Achieved = analytic FLOPs per sample (dlbench.models.flops; counted by
dlbench.run.flops_count for the user's own models) x samples per second:
training counts the forward and backward pass at the steady-state training
throughput; inference counts the forward pass at the batched throughput
(seconds per 1,000 samples). MFU = achieved / peak. The peak of a GPU cell
is the rate one GPU reached in torch's matrix product at its plateau (rule
gpu_probe) times the device count, the datasheet's rate per GPU
(workflow/resources/gpu_peaks.csv) beside it and in its place without a
probe; of a CPU cell (emulated devices too: they share the CPU) the faster of
the machine's probe (rule cpu_probe) and the fastest float32 quick probe of
any run on the same machine and threads: load from other work and an old
environment's BLAS can only slow a probe down, so the fastest is the closest
to what the CPU can do (the median of all runs understated it enough that a
well-built framework ran at "135%" of it), and a reduced precision's own
probe counts only where it is faster than float32's.
"""

import pandas as pd

from dlbench import catalog
from dlbench.analysis import hardware
from dlbench.plan import matrix
from dlbench.record.fields import MEASURED, Status

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
    "datasheet_gflops",
    "mfu",
]


# How a peak that the GPU's own probe measured is sourced (peak_source).
GPU_PROBE = "matmul probe at"


def datasheet_peak(cell, gpu_model, peaks):
    """(GFLOP/s, source): the datasheet rate of the cell's GPUs, of
    ``gpu_model`` as nvidia-smi names it, in the precision it ran: FP32, or
    the half-precision (bfloat16 / float16 tensor) rate; (None, why not)."""
    row = hardware.gpu_peak(gpu_model, peaks)
    if row is None:
        return None, "no peak for GPU {!r}".format(gpu_model)
    devices = int(cell["devices"])
    column, name = ("fp32_tflops", "FP32")
    if cell.get("precision") == catalog.TF32:
        return None, "no TF32 rate in the datasheet table"
    if cell.get("precision", catalog.FLOAT32) != catalog.FLOAT32:
        column, name = ("half_precision_tflops", "half precision")
    if pd.isna(row[column]):
        return None, "no {} peak for {} in the datasheet table".format(name, row["gpu"])
    return (
        row[column] * 1000 * devices,
        "{} x {} {} {:g} TFLOP/s ({})".format(
            devices, row["gpu"], name, row[column], row["source"]
        ),
    )


def _gpu_probe(cell, probes):
    """The machine's GPU probe (rule gpu_probe) in the cell's precision."""
    for found in probes:
        if found.get("device") != "gpu" or "gflops" not in found:
            continue
        if (found["machine"], found["precision"]) == (cell["machine"], cell.get("precision")):
            return found
    return None


def _gpu_peak(cell, runs, peaks, probes):
    """The rate one of the machine's GPUs reached at its plateau in the
    cell's precision (rule gpu_probe) x GPUs; the datasheet's where no probe
    ran. Returns (peak, source, datasheet peak)."""
    models = runs["gpu_model"].dropna()
    gpu_model = models.iloc[0] if len(models) else None
    datasheet, datasheet_source = datasheet_peak(cell, gpu_model, peaks)
    probe = _gpu_probe(cell, probes)
    if probe is None:
        return datasheet, datasheet_source, datasheet
    devices = int(cell["devices"])
    return (
        probe["gflops"] * devices,
        ("{} x {} {} " + GPU_PROBE + " {} x {}{} ({}); datasheet: {}").format(
            devices,
            probe["gpu_name"],
            probe["dtype"],
            probe["size"],
            probe["size"],
            "" if probe["reached_plateau"] else ", below its plateau (size limit)",
            probe["library"],
            datasheet_source,
        ),
        datasheet,
    )


def _machine_probe(cell, probes, precision=None):
    """The machine's probe (rule cpu_probe) for the cell's machine, threads
    and precision (or ``precision``), or None."""
    precision = precision or cell.get("precision", catalog.FLOAT32)
    for found in probes:
        if "gflops" not in found or found.get("device") == "gpu":  # could not run; a GPU's
            continue
        same = (found["machine"], str(found["threads_setting"]), found["precision"])
        if same == (cell["machine"], str(cell["threads"]), precision):
            return found
    return None


def _probe_source(probe):
    return "CPU {} matmul probe on {}, {} thread(s), at {} x {}{} ({})".format(
        probe["dtype"],
        probe["hostname"],
        probe["threads"],
        probe["size"],
        probe["size"],
        "" if probe["reached_plateau"] else ", below its plateau (size limit)",
        probe["library"],
    )


def _fastest_run_probe(runs, every_run):
    """(GFLOP/s, source) of the fastest quick float32 probe that any run on
    the cell's host and CPU with its threads made before it started, or
    None."""
    machine = runs[["hostname", "cpu_model", "threads_used"]].dropna().drop_duplicates()
    if not len(machine):
        return None
    host, cpu, threads = machine.iloc[0]
    quick = every_run[
        (every_run["hostname"] == host)
        & (every_run["cpu_model"] == cpu)
        & (every_run["threads_used"] == threads)
    ]["matmul_probe_gflops"].dropna()
    if not len(quick):
        return None
    return (
        quick.max(),
        "CPU float32 matmul probe on {}, {} thread(s): fastest of its {} runs".format(
            host, int(threads), len(quick)
        ),
    )


def _float32_peak(cell, runs, every_run, probes):
    """The faster of the machine's float32 probe (rule cpu_probe) and the
    fastest quick probe of its runs, or None: other work on the machine can
    only slow a probe down (the tests' other process once halved the rule's
    probe on a 2-vCPU Zen 3, 29 GFLOP/s against runs' 83)."""
    found = [_fastest_run_probe(runs, every_run)]
    probe = _machine_probe(cell, probes, catalog.FLOAT32)
    if probe is not None:
        found.append((probe["gflops"], _probe_source(probe)))
    found = [candidate for candidate in found if candidate is not None]
    return max(found, key=lambda candidate: candidate[0]) if found else None


def _peak(cell, runs, every_run, peaks, probes=()):
    """A CPU cell's peak GFLOP/s and where it comes from (a GPU cell's: ``_gpu_peak``). In
    float32, the faster of the machine's probe at the size where its rate stops rising (rule
    cpu_probe) and the fastest quick probe of any run on the same host and CPU with the same
    threads, whichever environment ran it (an old environment's numpy has a slower BLAS: the
    environment table shows each one's). In a reduced precision, the machine's probe in it, or
    the float32 peak where that is faster: where the CPU has no instructions for it (bfloat16
    without AVX512_BF16 or AMX), torch's matrix product emulates it slowly while a framework may
    convert and compute in float32 (XLA does), so its own probe bounds nothing."""
    single = _float32_peak(cell, runs, every_run, probes)
    precision = cell.get("precision", catalog.FLOAT32)
    if precision == catalog.FLOAT32:
        return single or (None, "no matmul probe recorded")
    probe = _machine_probe(cell, probes)
    if probe is None:
        return None, "no {} probe on this machine: MFU not computed".format(precision)
    if single is not None and single[0] > probe["gflops"]:
        return single[0], "{} (faster than its {} probe: {:.3g} GFLOP/s)".format(
            single[1], probe["dtype"], probe["gflops"]
        )
    return probe["gflops"], _probe_source(probe)


def table(summary, metrics, per_sample, peaks, probes=()):
    """``per_sample`` maps (dataset, model) to flops.per_sample's dict;
    ``probes``: the machines' probes (probe.machine_probe's records)."""
    rows = []
    measured = summary[summary["status"].isin(MEASURED)]
    ok = metrics[metrics["status"] == Status.OK]
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
        if cell["accelerator"] == "gpu" and int(cell["devices"]) > 0:
            peak, source, datasheet = _gpu_peak(cell, runs, peaks, probes)
        else:
            (peak, source), datasheet = _peak(cell, runs, ok, peaks, probes), None
        rows.append(
            {
                **{key: cell[key] for key in CELL + ["accelerator", "task"]},
                "forward_gflops_per_sample": flops["forward"] / 1e9,
                "training_gflops_per_sample": flops["training"] / 1e9,
                "samples_per_second": rate,
                "achieved_gflops": achieved,
                "peak_gflops": peak,
                "peak_source": source,
                "datasheet_gflops": datasheet,
                "mfu": achieved / peak if peak else None,
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)


CAPTION = (
    "Analytic FLOPs per sample (2 x multiply-adds of the dense, convolution and recurrent "
    "matrix products, from the layer shapes; training = forward + backward as frameworks "
    "compute it; for a model of your own, counted by PyTorch's FLOP counter on the model Keras "
    "builds, same convention), achieved GFLOP/s (training: x steady-state samples per second; "
    "inference: forward x batched samples per second) and model FLOP utilisation (MFU) = "
    "achieved / peak. Peak: for GPU cells the rate one GPU reached in the cell's precision at "
    "the size where torch's matrix product stops speeding up (rule gpu_probe) x GPUs, the "
    "datasheet's rate (FP32 or, for mixed precision, half precision; TF32 would allow more in "
    "float32) beside it as datasheet_gflops, and in its place where no probe ran; for CPU cells"
    " in float32 the faster of the machine's matrix-product probe on the same threads, at the "
    "size where its rate stops rising, and the fastest quick 1024 x 1024 probe of any run (other "
    "work only slows a probe down); in a reduced precision the machine's probe in it, or the "
    "float32 peak where that is faster (a CPU without bfloat16 instructions emulates bfloat16 "
    "products slowly, while a framework may compute in float32: XLA does). "
    "Element-wise work, data loading and framework overhead count as time but not as FLOPs, so "
    "small models score low."
)


def shown(frame):
    return frame.assign(mfu=[None if pd.isna(v) else "{:.1%}".format(v) for v in frame["mfu"]])
