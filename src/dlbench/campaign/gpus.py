"""The GPUs a campaign has: those ``nvidia-smi -L`` lists, and the refusal of
a campaign that plans GPU runs where the listing fails."""

import subprocess

from dlbench.campaign.config_files import planned_runs
from dlbench.campaign.progress import say


class GPUsNotListed(RuntimeError):
    """``nvidia-smi -L`` failed: this machine's GPUs are not known, which is
    not a machine without GPUs."""


def visible_gpus():
    """The GPUs ``nvidia-smi -L`` lists; GPUsNotListed, naming its failure
    (it could not start, did not answer, or exited with an error), where it
    lists none because it failed."""
    command = ["nvidia-smi", "-L"]
    try:
        done = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, check=False
        )
    except OSError as error:
        raise GPUsNotListed("`nvidia-smi -L` could not start: {}".format(error)) from None
    except subprocess.TimeoutExpired:
        raise GPUsNotListed("`nvidia-smi -L` did not answer in 60 s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).decode(errors="replace").strip()
        raise GPUsNotListed(
            "`nvidia-smi -L` exited with status {}: {}".format(done.returncode, said or "no output")
        )
    return [line for line in done.stdout.decode().splitlines() if line.startswith("GPU ")]


def campaign_gpus(configfiles, done=frozenset()):
    """(the GPUs ``nvidia-smi -L`` lists, why it listed none or None). Where
    it fails and the campaign plans GPU runs, the campaign is refused with
    its failure, before any Snakemake starts: asking Snakemake for a GPU
    that may not work is no campaign. A campaign of CPU runs alone (the
    rehearsal's, on a machine without NVIDIA's driver) goes on."""
    try:
        return visible_gpus(), None
    except GPUsNotListed as error:
        failure = str(error)
    gpu_runs = [
        path for run, path in planned_runs(configfiles) if int(run.devices) > 0 and path not in done
    ]
    if gpu_runs:
        raise SystemExit(
            "this machine's GPUs are not known: {}. The campaign plans {} GPU runs and started "
            "none: make `nvidia-smi -L` list the GPUs (the driver, the device files), then run "
            "the same command again".format(failure, len(gpu_runs))
        )
    say("GPUs not listed ({}); no GPU run is planned".format(failure))
    return [], failure
