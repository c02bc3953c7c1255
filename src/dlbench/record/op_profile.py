"""The op profile's file (ops.json), as a run writes it
(dlbench.run.op_profiling) and the analysis reads it
(dlbench.analysis.op_profiles): its keys, and the words its ops use.
Importable on Python 3.6."""

import collections

# One op of a window: its name as the framework's profiler gives it, how many
# times it ran, the seconds attributed to it (its own time, not its
# children's: dlbench.run.op_profiling.exclusive_times), where it ran ("host", or "device" for a
# GPU's kernels) and, where the profiler knows it, the part of the step it
# belongs to (``OPTIMIZER``: the update of the weights).
OpTime = collections.namedtuple("OpTime", "name calls seconds place scope")
HOST, DEVICE = "host", "device"
OPTIMIZER = "optimizer"


def ops_file(framework, profiler, version, steps, window_seconds, device_busy_seconds, ops, reason):
    """ops.json: the framework (whose table names its ops' categories), the
    profiler and its version; the window's steps, its wall
    seconds and, on a GPU, the seconds its device was busy; every op
    (``OpTime``) it saw; why there is no profile, where there is none.
    ``profile_seconds`` (the harness adds it): the whole profile's cost."""
    return {
        "framework": framework,
        "profiler": profiler,
        "profiler_version": version,
        "steps": steps,
        "window_seconds": window_seconds,
        "profile_seconds": None,
        "device_busy_seconds": device_busy_seconds,
        "ops": [dict(op._asdict()) for op in ops],
        "reason": reason,
    }


def not_profiled(reason, framework=None, profiler_name=None):
    """ops.json of a run without an op profile, and why."""
    return ops_file(framework, profiler_name, None, 0, None, None, [], reason)
