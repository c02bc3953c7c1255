"""What this machine can give the runs it plans, for config_rules.validate_machine:
the CPUs the workflow may use (its affinity) and the GPUs it has, where it
can tell (CUDA_VISIBLE_DEVICES or nvidia-smi; asked only when the config
runs on GPUs). A machine where nvidia-smi lists no GPU, or that has none,
has 0: its GPU cells would only fail, one by one, after their environments
were built."""

from dlbench.host import gpus, runtime
from dlbench.plan import matrix


def machine_limits(config):
    """(CPUs, GPUs or None where none are asked for)."""
    cpus = len(runtime.available_cpus())
    wants_gpus = matrix.option(config, "accelerator") == "gpu" and any(
        int(devices) > 0 for devices in matrix.every_dimension_value(config, "devices")
    )
    seen = gpus.visible_gpus() if wants_gpus else []
    return cpus, (len(seen) if wants_gpus else None)
