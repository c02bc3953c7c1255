"""Energy of a run's timed windows: the GPUs' total-energy counters (NVML,
through nvidia-ml-py's ``pynvml``) and the CPU packages' RAPL counters
(``/sys/class/powercap``), read just outside the clock around each timed
epoch or batch series. Where a machine has neither, the record says why
instead of a number. Importable on Python 3.6.

NVML's counter (``nvmlDeviceGetTotalEnergyConsumption``, millijoules since
the driver loaded; Volta and later) moves in steps: on an H200 (the GPU
campaign, 2026-11) about every 0.1 s, 12 to 14 J at a time, so epochs of
0.01 to 0.05 s read 0 J or one whole step. The steady figure is therefore
the steady epochs' energy together over their number, and only where they
last at least ``GPU_MIN_SECONDS`` together; the record says why otherwise.
"""

import glob
import os

RAPL_ROOT = "/sys/class/powercap"
# The shortest timed span whose GPU energy is recorded: ten of the counter's
# steps seen on an H200, so that its rounding stays near a tenth.
GPU_MIN_SECONDS = 1.0


def _nvml_handles(gpu_ids):
    """NVML handles of the run's GPUs, or (None, why not)."""
    if not gpu_ids:
        return None, "no GPU in this run"
    try:
        import pynvml
    except ImportError:
        return None, "no NVML here (nvidia-ml-py is not installed)"
    try:
        pynvml.nvmlInit()
        handles = []
        for gpu in gpu_ids:
            if gpu.startswith("GPU-"):
                handles.append(pynvml.nvmlDeviceGetHandleByUUID(gpu))
            else:
                handles.append(pynvml.nvmlDeviceGetHandleByIndex(int(gpu)))
        for handle in handles:  # refused on GPUs before Volta
            pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    except Exception as error:  # NVMLError_NotSupported, no driver, ...
        return None, "NVML has no energy counter here: {}".format(error)
    return (pynvml, handles), None


def _rapl_packages(root):
    """The CPU packages' energy counter files (and their wrap-around), or
    (None, why not)."""
    found = []
    for domain in sorted(glob.glob(os.path.join(root, "intel-rapl:*"))):
        if os.path.basename(domain).count(":") != 1:  # a package, not a sub-domain
            continue
        counter = os.path.join(domain, "energy_uj")
        try:
            with open(counter) as handle:
                int(handle.read())
            with open(os.path.join(domain, "max_energy_range_uj")) as handle:
                wrap = int(handle.read())
        except (OSError, ValueError):
            continue
        found.append((counter, wrap))
    if not found:
        return None, "no readable RAPL counter (CPU energy is not exposed on this machine)"
    return found, None


class Meter(object):
    """Reads the counters; ``joules(before, after)`` turns two readings into
    energy, None for a counter the machine does not have."""

    def __init__(self, gpu_ids=None, rapl_root=RAPL_ROOT):
        self.nvml, self.gpu_reason = _nvml_handles(gpu_ids)
        self.rapl, self.cpu_reason = _rapl_packages(rapl_root)

    def read(self):
        reading = {"gpu_mj": None, "cpu_uj": None}
        if self.nvml is not None:
            pynvml, handles = self.nvml
            reading["gpu_mj"] = [pynvml.nvmlDeviceGetTotalEnergyConsumption(h) for h in handles]
        if self.rapl is not None:
            values = []
            for counter, _ in self.rapl:
                with open(counter) as handle:
                    values.append(int(handle.read()))
            reading["cpu_uj"] = values
        return reading

    def joules(self, before, after):
        found = {"gpu": None, "cpu": None}
        if before["gpu_mj"] is not None:
            found["gpu"] = sum(b - a for a, b in zip(before["gpu_mj"], after["gpu_mj"])) / 1e3
        if before["cpu_uj"] is not None:
            total = 0
            for (a, b), (_, wrap) in zip(zip(before["cpu_uj"], after["cpu_uj"]), self.rapl):
                total += b - a if b >= a else b + wrap - a  # the counter wrapped
            found["cpu"] = total / 1e6
        return found

    def utilisation(self):
        """The GPUs' utilisation (NVML: the share of its last sample period,
        1/6 to 1 s, in which a kernel ran), read at the end of the timed
        span: evidence that the GPU did the work."""
        if self.nvml is None:
            return {}
        pynvml, handles = self.nvml
        try:
            found = [pynvml.nvmlDeviceGetUtilizationRates(h).gpu for h in handles]
        except Exception as error:  # NVMLError_NotSupported
            return {"gpu_utilisation_not_measured": str(error)}
        return {"gpu_utilisation_percent_at_end": found}

    def sources(self):
        return {
            "gpu": "NVML total energy of the run's GPUs" if self.nvml else None,
            "gpu_not_measured": self.gpu_reason,
            "cpu": "RAPL, every CPU package" if self.rapl else None,
            "cpu_not_measured": self.cpu_reason,
        }


def _too_short(seconds):
    return (
        "the timed span lasts {:.3f} s, under {} s: NVML's energy counter moves in "
        "steps of about 0.1 s, so its figure would be mostly rounding".format(
            seconds, GPU_MIN_SECONDS
        )
    )


def per_epoch(meter, epochs, samples_per_epoch, seconds=None, steady_epochs=None):
    """The record's energy block of a training run: joules of each timed
    epoch and of a steady epoch (the steady epochs' energy together over
    their number; the first epoch's alone with one) and per sample.
    ``seconds``: each epoch's; ``steady_epochs``: which epochs (from 1) are
    steady state, by default all but the first."""
    found = dict(meter.sources())
    count = len(epochs)
    steady = steady_epochs or list(range(2, count + 1)) or [1]
    span = sum(seconds[e - 1] for e in steady) if seconds else None
    for kind in ("gpu", "cpu"):
        joules = [epoch[kind] for epoch in epochs]
        if not joules or joules[0] is None:
            continue
        found[kind + "_joules_per_epoch"] = joules
        if kind == "gpu" and span is not None and span < GPU_MIN_SECONDS:
            found["gpu_steady_not_measured"] = _too_short(span)
            continue
        per_steady = sum(joules[e - 1] for e in steady) / len(steady)
        found[kind + "_joules_steady_epoch"] = per_steady
        found[kind + "_joules_per_sample"] = (
            per_steady / samples_per_epoch if samples_per_epoch else None
        )
        if span:
            found[kind + "_watts_steady"] = per_steady * len(steady) / span
    found.update(meter.utilisation())
    return found


def per_samples(meter, joules, samples, seconds=None):
    """The record's energy block of an inference run: joules per 1,000
    samples over the timed batches (``seconds`` in all)."""
    found = dict(meter.sources())
    for kind in ("gpu", "cpu"):
        if joules[kind] is None or not samples:
            continue
        if kind == "gpu" and seconds is not None and seconds < GPU_MIN_SECONDS:
            found["gpu_steady_not_measured"] = _too_short(seconds)
            continue
        found[kind + "_joules_per_1000_samples"] = 1000.0 * joules[kind] / samples
        if seconds:
            found[kind + "_watts_steady"] = joules[kind] / seconds
    found.update(meter.utilisation())
    return found
