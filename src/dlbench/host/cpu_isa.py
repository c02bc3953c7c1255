"""What a CPU's instructions let a framework's kernels do, known before a run.

Frameworks built on oneDNN (MXNet, TensorFlow, PyTorch, OpenVINO) pick their
kernels by the highest of oneDNN's instruction-set levels that the CPU has,
and run no kernel above the level named in ``ONEDNN_MAX_CPU_ISA`` (older
oneDNN: ``DNNL_MAX_CPU_ISA``) where that is set. A mode whose kernels exist
only from some level up (MXNet's bfloat16 needs AVX-512) cannot run below
it: the matrix makes such cells n/a with the reason, and the supervisor,
on a machine other than the planning one, records them unavailable. The cap
makes any CPU show what a lower one would do (``DNNL_MAX_CPU_ISA=AVX2``).

Runs inside every backend environment (the supervisor): no framework, and
importable on Python 3.6.
"""

import functools
import os
from typing import Dict, FrozenSet, Iterable, Mapping, Optional, Set, Tuple

# oneDNN's levels (the values ONEDNN_MAX_CPU_ISA takes), lowest first, with
# the /proc/cpuinfo flags each needs on top of the one below it.
LEVELS = (
    ("SSE41", ("sse4_1",)),
    ("AVX", ("avx",)),
    ("AVX2", ("avx2",)),
    ("AVX512_CORE", ("avx512f", "avx512bw", "avx512vl", "avx512dq")),
    ("AVX512_CORE_VNNI", ("avx512_vnni",)),
    ("AVX512_CORE_BF16", ("avx512_bf16",)),
    ("AVX512_CORE_FP16", ("avx512_fp16",)),
    ("AVX512_CORE_AMX", ("amx_tile", "amx_int8", "amx_bf16")),
    ("AVX512_CORE_AMX_FP16", ("amx_fp16",)),
)
LEVEL_NAMES = tuple(name for name, _ in LEVELS)
# oneDNN's cap, by its name since v2.5 and before (MXNet 1.9's oneDNN reads
# only the older one; measured): a cap under either name caps every run, and
# the supervisor hands it on under both (``cap_environment``).
CAP_VARIABLES = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")


# Where the CPU's flags are read (a test points it at a file of its own).
CPUINFO = "/proc/cpuinfo"


@functools.lru_cache(maxsize=None)
def _read_flags(path: str) -> Tuple[FrozenSet[str], Optional[str]]:
    """(flags, None), or (no flags, why) where ``path`` cannot be read: an
    unreadable file is not a CPU without the instructions."""
    try:
        with open(path) as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split()), None
    except OSError as error:
        return frozenset(), "this CPU's flags could not be read ({})".format(error)
    return frozenset(), None


def cpu_flags() -> Set[str]:
    """The CPU's flags as /proc/cpuinfo names them (empty off Linux, and
    where the file cannot be read: ``flags_unreadable`` says why)."""
    return set(_read_flags(CPUINFO)[0])


def flags_unreadable() -> Optional[str]:
    """Why this CPU's flags could not be read (the OSError), or None."""
    return _read_flags(CPUINFO)[1]


def cap(environ: Optional[Mapping[str, str]] = None) -> Optional[Tuple[str, str]]:
    """(variable, level) of the lowest cap set in ``environ`` (this process'
    by default), or None where none is set."""
    environ = os.environ if environ is None else environ
    found = [
        (variable, environ[variable].strip().upper())
        for variable in CAP_VARIABLES
        if environ.get(variable, "").strip()
    ]
    return min(found, key=lambda item: _level_of(item[1])) if found else None


def cap_environment(environ: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The cap under every name oneDNN reads, for a run's environment."""
    found = cap(environ)
    return {variable: found[1] for variable in CAP_VARIABLES} if found else {}


def _level_of(name: str) -> int:
    """The index in ``LEVELS`` of a cap's value; past the top for ALL (no
    cap) and for names not known here (a newer oneDNN's)."""
    return LEVEL_NAMES.index(name) if name in LEVEL_NAMES else len(LEVELS)


def _index(flags, environ, capped=True):
    flags = cpu_flags() if flags is None else set(flags)
    found = -1
    for index, (_, needs) in enumerate(LEVELS):
        if not set(needs) <= flags:
            break
        found = index
    limit = cap(environ)
    if capped and limit is not None:
        found = min(found, _level_of(limit[1]))
    return found


def level(
    flags: Optional[Iterable[str]] = None, environ: Optional[Mapping[str, str]] = None
) -> Optional[str]:
    """The highest oneDNN level this CPU runs kernels of, the cap applied;
    None below SSE4.1 (or where the flags cannot be read)."""
    found = _index(flags, environ)
    return LEVEL_NAMES[found] if found >= 0 else None


def describe(
    flags: Optional[Iterable[str]] = None, environ: Optional[Mapping[str, str]] = None
) -> Dict[str, Optional[str]]:
    """What the record keeps: the level, and the cap where one is set."""
    capped = cap(environ)
    return {
        "onednn_level": level(flags, environ),
        "capped_by": "{}={}".format(*capped) if capped else None,
    }


def missing(
    needed: str,
    flags: Optional[Iterable[str]] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> Optional[str]:
    """Why this CPU cannot run kernels of the level ``needed``, or None.
    Where this machine's flags (``flags`` None) cannot be read, the reason
    says so: whether the CPU has the level is not known."""
    limit = cap(environ)
    unreadable = flags_unreadable() if flags is None else None
    if unreadable:
        capped = limit is not None and _level_of(limit[1]) < LEVEL_NAMES.index(needed)
        return "needs {}; {}{}".format(
            needed,
            unreadable,
            ", and capped by {}={}".format(*limit) if limit is not None and capped else "",
        )
    found = _index(flags, environ)
    if found >= LEVEL_NAMES.index(needed):
        return None
    lowered = found < _index(flags, environ, capped=False)
    return "needs {}; this CPU runs oneDNN kernels up to {}{}".format(
        needed,
        LEVEL_NAMES[found] if found >= 0 else "none of oneDNN's levels",
        ", capped by {}={}".format(*limit) if limit is not None and lowered else "",
    )
