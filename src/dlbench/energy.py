"""Energy of a run's timed windows: the GPUs' total-energy counters (NVML,
through nvidia-ml-py's ``pynvml``) and the CPU packages' RAPL counters
(``/sys/class/powercap``), read just outside the clock around each timed
epoch or batch series. Where a machine has neither, the record says why
instead of a number. Importable on Python 3.6.

NVML's counter (``nvmlDeviceGetTotalEnergyConsumption``, millijoules since
the driver loaded; Volta and later) is updated every few tens of
milliseconds: an epoch shorter than that reads as little or nothing, which
is why the record keeps the steady epochs' median, not one epoch.
"""

import glob
import os
import statistics

RAPL_ROOT = "/sys/class/powercap"


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

    def sources(self):
        return {
            "gpu": "NVML total energy of the run's GPUs" if self.nvml else None,
            "gpu_not_measured": self.gpu_reason,
            "cpu": "RAPL, every CPU package" if self.rapl else None,
            "cpu_not_measured": self.cpu_reason,
        }


def per_epoch(meter, epochs, samples_per_epoch):
    """The record's energy block of a training run: joules of each timed
    epoch, the steady epochs' median (the first epoch's alone with one)
    and per sample."""
    found = dict(meter.sources())
    for kind in ("gpu", "cpu"):
        joules = [epoch[kind] for epoch in epochs]
        if not joules or joules[0] is None:
            continue
        steady = statistics.median(joules[1:]) if len(joules) > 1 else joules[0]
        found[kind + "_joules_per_epoch"] = joules
        found[kind + "_joules_steady_epoch"] = steady
        found[kind + "_joules_per_sample"] = (
            steady / samples_per_epoch if samples_per_epoch else None
        )
    return found


def per_samples(meter, joules, samples):
    """The record's energy block of an inference run: joules per 1,000
    samples over the timed batches."""
    found = dict(meter.sources())
    for kind in ("gpu", "cpu"):
        if joules[kind] is not None and samples:
            found[kind + "_joules_per_1000_samples"] = 1000.0 * joules[kind] / samples
    return found
