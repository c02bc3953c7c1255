"""Faults injected into single runs, to see what the workflow does with
them (docs/troubleshooting.md; tests/e2e/test_faults.py): the environment
variable DLBENCH_FAULTS lists ``dataset/model/backend/devices=kind`` items,
comma-separated; a run of a listed cell suffers the fault (``raise``,
``segfault``, ``hang``, ``oom``) inside its process, after its framework
started. Without the variable nothing happens. Importable on Python 3.6."""

import os
import time

VARIABLE = "DLBENCH_FAULTS"


def inject(spec):
    """The fault ``DLBENCH_FAULTS`` names for the cell of ``spec`` (a
    RunSpec), if any."""
    wanted = os.environ.get(VARIABLE, "")
    cell = "{}/{}/{}/{}".format(spec.dataset, spec.model, spec.backend, spec.devices)
    kinds = [item.partition("=")[2] for item in wanted.split(",") if item.partition("=")[0] == cell]
    for kind in kinds:
        print("injecting fault: {}".format(kind), flush=True)
        if kind == "raise":
            raise RuntimeError("injected framework error")
        if kind == "segfault":
            import ctypes

            ctypes.string_at(0)  # a read of address 0 in native code
        if kind == "hang":
            while True:
                time.sleep(60)
        if kind == "oom":
            hoard = []
            while True:  # until the memory limit stops it
                hoard.append(bytearray(64 * 2**20))
        raise ValueError("unknown fault {!r} in {}".format(kind, VARIABLE))
