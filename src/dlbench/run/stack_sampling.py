"""A run whose python stacks py-spy samples: where a cell's steady state
spends its time (config ``python_stacks``).

The python stacks are one extra run of the cell, never one of its timed
repeats, so that no timed figure carries the sampler's cost. py-spy starts
the harness and samples its stacks from outside the process, Python and
native frames together (``--native``), idle frames included (``--idle``:
waiting for a device, a lock or a sleep is time too), so that every backend,
Python 3.6 included, is sampled the same way with nothing installed in its
environment: py-spy is the workflow's. The stacks are written as py-spy's
raw collapsed format (one line per distinct stack: ``frame;frame;... count``,
the outermost frame first). The harness runs the steady state inside
``harness.steady_epoch`` and ``harness.steady_predictions``, whose frames
mark the samples that count (dlbench.analysis.python_stacks).

Where py-spy cannot sample (no permission to attach, no py-spy),
sampling.json says why and the workflow goes on. Importable on Python 3.6.
"""

import os
import subprocess
import sys

SAMPLER = "py-spy"
# Samples per second: 200 gives a steady epoch of a second 200 stacks; each
# sample pauses the process while its native stack is read.
RATE = 200
OPTIONS = ("--idle", "--format", "raw")
NATIVE = "--native"
# Frameworks whose native frames py-spy reads too slowly to sample a run by
# them: unwinding through TensorFlow's and XLA's libraries stretched a steady
# epoch 20 to 90 times (keras-jax, keras-tensorflow). They compute on threads
# of their own, which py-spy does not sample either; their python stacks have
# the Python frames only.
SLOW_NATIVE_FRAMES = (
    "py-spy's native unwinding through {}'s libraries costs 20 to 90 times the step"
)
PYTHON_FRAMES_ONLY = {"tensorflow": "TensorFlow", "jax": "XLA"}
# A launch of one process per device (torchrun) is several processes; py-spy
# samples one.
ONE_PROCESS = "one_process"


def not_sampled(parallel):
    """Why a run with this ``parallel`` block cannot be sampled, or None."""
    if parallel.get("launch") not in (None, ONE_PROCESS):
        return "its devices run in one process each (torchrun): py-spy samples one process"
    return None


def options(framework):
    """py-spy's options for a run of ``framework``: native frames too, but
    where they cost too much (``PYTHON_FRAMES_ONLY``)."""
    native = [] if framework in PYTHON_FRAMES_ONLY else [NATIVE]
    return native + list(OPTIONS)


def native_frames(framework):
    """True where the sampler reads native frames, else why not."""
    if framework in PYTHON_FRAMES_ONLY:
        return SLOW_NATIVE_FRAMES.format(PYTHON_FRAMES_ONLY[framework]) + ": Python frames only"
    return True


def command(py_spy, stacks_path, harness_command, framework=None, rate=RATE):
    """The harness' command line under py-spy, writing ``stacks_path``."""
    sampler = [py_spy, "record", "--rate", str(rate), "--output", stacks_path]
    return sampler + options(framework) + ["--"] + list(harness_command)


def version(py_spy):
    """py-spy's version line, or None where it does not run."""
    try:
        found = subprocess.run(
            [py_spy, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = found.stdout.decode("utf-8", "replace").strip()
    return text if found.returncode == 0 and text else None


def can_sample(py_spy):
    """None where py-spy can sample a process of this machine (a second's
    trial on this interpreter), else why not: the error it gave."""
    trial = [sys.executable, "-c", "import time; time.sleep(0.5)"]
    sampler = [py_spy, "record", "--duration", "1", "--output", os.devnull]
    try:
        found = subprocess.run(
            sampler + options(None) + ["--"] + trial,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return "{} did not run: {}".format(SAMPLER, error)
    text = found.stdout.decode("utf-8", "replace")
    if "Error" in text and ("ermission" in text or "ptrace" in text):
        return "{} cannot attach to a process here: {}".format(SAMPLER, _last_error(text))
    return None


def _last_error(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "rror" in line or "ermission" in line]
    return (errors or lines or ["no output"])[-1]


def samples_in(stacks_path):
    """How many samples a raw stacks file holds (0 where there is none)."""
    total = 0
    if not os.path.exists(stacks_path):
        return 0
    with open(stacks_path) as handle:
        for line in handle:
            _, _, count = line.rstrip("\n").rpartition(" ")
            if count.isdigit():
                total += int(count)
    return total


def description(py_spy, stacks_path, reason=None, framework=None, rate=RATE):
    """What sampling.json says: the sampler, its options and rate, how many
    samples it took, whether it read native frames (and why not), and why
    there are no python stacks where there are none."""
    found = {
        "sampler": version(py_spy) if py_spy else None,
        "options": options(framework),
        "native_frames": native_frames(framework),
        "rate_hz": rate,
        "samples": samples_in(stacks_path),
        "reason": reason,
    }
    if reason is None and not found["samples"]:
        found["reason"] = "{} took no sample".format(SAMPLER)
    return found
