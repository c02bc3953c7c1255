"""The GPU campaign inside its prepared interpreter (``--inside``): the kit
checked against the machine, the stages run in order under the budget, and
what they recorded packed, complete or not."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from dlbench.campaign.config_files import campaign_config
from dlbench.campaign.gpus import campaign_gpus
from dlbench.campaign.interpreter import unmet_requirements
from dlbench.campaign.packing import pack
from dlbench.campaign.progress import say
from dlbench.campaign.stage_order import campaign_stages, recorded_elsewhere
from dlbench.campaign.stage_runner import run_stage
from dlbench.plan import paths


def run_campaign(args):
    """The campaign of ``args`` (gpu_campaign's options) in this interpreter:
    0 where every stage ran to its end, 3 where the budget cut it short (the
    same command resumes it)."""
    started = args.started or time.time()
    deadline = (  # no budget: every stage runs to its end
        started + args.budget_seconds - args.pack_reserve_seconds
        if args.budget_seconds
        else float("inf")
    )
    kit = json.loads((Path(args.kit) / "kit.json").read_text())
    problems = unmet_requirements([entry["name"] for entry in kit["carried"]])
    if problems:
        raise SystemExit(
            "the kit does not fit this machine's packages (remove their names from "
            "envs/gpu-image.txt, so that the kit carries them, and make gpu-kit again):\n  "
            + "\n  ".join(problems)
        )
    say("the kit's {} distributions have what they need".format(len(kit["carried"])))
    if args.prepare_only:
        return 0
    configfiles = campaign_config(args, sys.executable)
    done = recorded_elsewhere(args.resume_from)
    if done:
        say("{} runs recorded by earlier campaigns are left out".format(len(done)))
    gpus, gpus_not_listed = campaign_gpus(configfiles, done)
    campaign = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "budget_seconds": args.budget_seconds,
        "interpreter": sys.executable,
        "gpus": gpus,
        "gpus_not_listed": gpus_not_listed,
        "kit": {key: kit[key] for key in ("python_version", "kit_bytes", "image_list")},
        "configfiles": configfiles,
        "resumed_from": {"packs": args.resume_from or [], "runs_left_out": len(done)},
        "stages": [],
        "complete": False,
    }
    options = ["--configfile", *configfiles, "--cores", str(args.jobs or os.cpu_count())]
    options += ["--resources", "gpu={}".format(max(len(gpus), 1))]
    Path(paths.LOGS_DIR).mkdir(exist_ok=True)
    complete = True
    with open(paths.GPU_CAMPAIGN_LOG, "a") as log:
        # A Snakemake killed at an earlier budget's end (it outlived its grace
        # period) leaves its lock: the campaign is the folder's only Snakemake.
        snakemake = [sys.executable, "-m", "snakemake"]
        subprocess.call(snakemake + ["--unlock"] + options, stdout=log, stderr=subprocess.STDOUT)
        for name, targets in campaign_stages(args, configfiles, done):
            if not targets:  # no run of this kind in the config
                continue
            left = deadline - time.time()
            if left < args.min_stage_seconds:
                say("{}: not started, {:.0f} s of the budget left".format(name, max(left, 0)))
                campaign["stages"].append({"name": name, "started": False})
                complete = False
                continue
            say(
                "{}: Snakemake with {:.0f} s of the budget left".format(name, left)
                if args.budget_seconds
                else "{}: Snakemake".format(name)
            )
            began = time.time()
            command = [*snakemake, *targets, *options]
            status, interrupted = run_stage(command, deadline, log)
            seconds = time.time() - began
            say(
                "{}: {} after {:.0f} s".format(
                    name, "stopped" if interrupted else "exit {}".format(status), seconds
                )
            )
            campaign["stages"].append(
                {
                    "name": name,
                    "started": True,
                    "targets": len([t for t in targets if t.endswith(".json")]),
                    "seconds": round(seconds, 1),
                    "exit_status": status,
                    "interrupted": interrupted,
                }
            )
            complete = complete and not interrupted and status == 0
    campaign["complete"] = complete
    campaign["seconds"] = round(time.time() - started, 1)
    archive, with_logs = pack(args.out, campaign, int(args.archive_limit_mib * 2**20))
    say(
        "packed {} ({:.1f} MiB{}); {}".format(
            archive,
            archive.stat().st_size / 2.0**20,
            "" if with_logs else ", logs left out",
            "complete" if complete else "not complete: the same command resumes it",
        )
    )
    return 0 if complete else 3
