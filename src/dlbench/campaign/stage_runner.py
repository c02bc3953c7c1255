"""One stage of a GPU campaign: Snakemake run until it ends or the budget's
deadline, then interrupted, and killed if it outlives a grace period."""

import os
import signal
import subprocess
import time

from dlbench.campaign.progress import say

INTERRUPT_GRACE_SECONDS = 60


def _interruptible():
    """In the stage's process before it starts: SIGINT does what it does by
    default. A campaign started in the background of a shell without job
    control (``nohup ... &``) ignores SIGINT, and an ignored signal stays
    ignored across exec: Snakemake would not hear the budget's interrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_stage(command, deadline, log):
    """Snakemake until it ends or the deadline: then interrupted (it
    cancels its jobs and removes what they left half-written) and, after a
    grace period, killed. Returns (exit status, interrupted)."""
    process = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_interruptible,
    )
    while process.poll() is None:
        if time.time() >= deadline:
            say("budget reached: interrupting Snakemake")
            process.send_signal(signal.SIGINT)
            try:
                process.wait(INTERRUPT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            return process.returncode, True
        time.sleep(1)
    return process.returncode, False
