"""The op profile's file (ops.json), as a run writes it
(dlbench.run.op_profiling) and the analysis reads it
(dlbench.analysis.op_profiles): its keys, and the words its ops use.
Importable on Python 3.6."""

from typing import Any, Dict, NamedTuple, Optional, Sequence

HOST, DEVICE = "host", "device"
OPTIMIZER = "optimizer"


class OpTime(NamedTuple):
    """One op of a window, as ops.json lists it."""

    name: str  # as the framework's profiler gives it
    calls: int  # how many times it ran in the window
    # Seconds attributed to it: its own time, not its children's
    # (dlbench.run.op_profiling.exclusive_times).
    seconds: float
    place: str  # HOST, or DEVICE for a GPU's kernels
    # The part of the step it belongs to (OPTIMIZER: the update of the
    # weights), where the profiler knows it.
    scope: Optional[str]


def ops_file(
    framework: Optional[str],
    profiler: Optional[str],
    version: Optional[str],
    steps: int,
    window_seconds: Optional[float],
    device_busy_seconds: Optional[float],
    ops: Sequence[OpTime],
    reason: Optional[str],
) -> Dict[str, Any]:
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


def not_profiled(
    reason: str, framework: Optional[str] = None, profiler_name: Optional[str] = None
) -> Dict[str, Any]:
    """ops.json of a run without an op profile, and why."""
    return ops_file(framework, profiler_name, None, 0, None, None, [], reason)
