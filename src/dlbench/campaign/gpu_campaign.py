"""The GPU campaign: config/gpu.yaml run on a GPU machine that has no network,
inside a time budget, its records packed to take home (docs/gpus.md).

Make the kit where pip reaches PyPI (``make gpu-kit``), copy the project and
its ``.gpu-kit`` to the GPU machine, and there, from the project's root::

    PYTHONPATH=src python3 -m dlbench.campaign.gpu_campaign --out gpu-results

1. An interpreter for every step: a venv of the machine's ``python3`` whose
   path reaches that interpreter's own packages (its CUDA frameworks) after
   the kit's wheels, installed with ``pip --no-index --no-deps --target``; the
   kit's requirements are checked against what the machine holds.
2. The config: ``config/gpu.yaml`` with every backend pointed at that
   interpreter (existing environments).
3. Snakemake in stages, the GPU runs first, then the CPU runs, then the
   tables and the report (or a campaign file's stages, ``--campaign``), each stage as
   long as the budget allows. At the budget's end Snakemake is interrupted,
   which removes the outputs of the jobs it cut off; the same command again
   resumes where it stopped.
4. The records, tables, plots, logs and the report packed into ``--out``
   (results.tar.gz, campaign.json), to copy back; the logs are left out where
   the archive would exceed ``--archive-limit-mib``.

The first part runs in the machine's interpreter with the standard library
alone; the rest in the prepared interpreter (``--inside``). ``--dry-run``
prints the stages and how long each should take, from earlier campaigns'
records, and runs nothing::

    .venv/bin/python -m dlbench.campaign.gpu_campaign --campaign FILE --dry-run --budget-seconds 540

This module is the command line alone; the campaign's parts are modules of
dlbench.campaign: interpreter (step 1), config_files (step 2), stage_order and
stage_runner (step 3), packing (step 4), campaign_run (steps 2 to 4 in
order), gpus, and dry_run.
"""

import argparse
import os
import subprocess
import sys
import time

from dlbench.campaign.campaign_run import run_campaign
from dlbench.campaign.config_files import CONFIG
from dlbench.campaign.dry_run import dry_run
from dlbench.campaign.interpreter import (
    ENV_DIR,
    inside_environment,
    prepare_interpreter,
)
from dlbench.campaign.stage_order import read_campaign_file
from dlbench.plan import paths


def outer(args):
    """The campaign from the machine's interpreter: its interpreter prepared,
    then this command again inside that one (``--inside``), told when the
    campaign started, since the budget counts the preparation too."""
    started = time.time()
    env_python = prepare_interpreter(args.kit, args.python, args.env)
    inside = [
        env_python,
        "-m",
        "dlbench.campaign.gpu_campaign",
        "--inside",
        "--started",
        str(started),
    ]
    passed = [a for a in (args.argv or []) if a != "--inside"]
    return subprocess.call(inside + passed, env=inside_environment(args.src, os.environ))


def command_line_parser():
    """The campaign's options, documented in docs/gpus.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        help="the folder the packed results go to, to copy back from the GPU machine "
        "(required for a run)",
    )
    parser.add_argument("--kit", default=paths.KIT_DIR, help="the wheels of make gpu-kit")
    parser.add_argument("--python", default="python3", help="the machine's interpreter")
    parser.add_argument("--env", default=ENV_DIR, help="where the campaign's interpreter goes")
    parser.add_argument(
        "--config",
        nargs="+",
        help="config files, later ones overriding earlier ones (Snakemake's --configfile; "
        "default: {}, or the campaign file's)".format(CONFIG),
    )
    parser.add_argument(
        "--campaign",
        metavar="FILE",
        help="a campaign file (config/campaigns/): its config files, then --config's, and "
        "its stages in its order (default: config/gpu.yaml's generic stages)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the stages, their runs and how long each should take, and stop: "
        "nothing runs, no kit is needed",
    )
    parser.add_argument(
        "--estimate-from",
        nargs="+",
        default=[paths.EARLIER_GPU_RECORDS],
        metavar="RECORDS",
        help="earlier campaigns' records the dry run's estimates come from: folders or "
        "results.tar.gz packs (default: %(default)s)",
    )
    parser.add_argument(
        "--job-seconds",
        type=float,
        default=5,
        help="the dry run's Snakemake time per run beyond its record (default: %(default)s)",
    )
    parser.add_argument(
        "--probe-seconds",
        type=float,
        default=17,
        help="the dry run's time per GPU probe (default: %(default)s)",
    )
    parser.add_argument(
        "--devices", type=int, nargs="+", help="device counts (default: the config's)"
    )
    parser.add_argument(
        "--budget-seconds",
        type=float,
        help="the whole campaign's time, the interpreter's preparation and the pack included, "
        "for a machine lent for a limited time; at its end the campaign stops and packs, and "
        "the same command again resumes (default: none, the campaign runs to its end)",
    )
    parser.add_argument(
        "--pack-reserve-seconds",
        type=float,
        default=45,
        help="the end of the budget kept for packing (default: %(default)s)",
    )
    parser.add_argument(
        "--min-stage-seconds",
        type=float,
        default=30,
        help="a stage is not started with less of the budget left (default: %(default)s)",
    )
    parser.add_argument(
        "--archive-limit-mib",
        type=float,
        default=0,
        help="the largest results.tar.gz, for a machine whose files come back through a "
        "transfer of limited size: the logs are left out above it (default: 0, no limit)",
    )
    parser.add_argument("--jobs", type=int, help="Snakemake's cores (default: every CPU)")
    parser.add_argument("--src", default="src", help="the library, on the interpreter's path")
    parser.add_argument(
        "--prepare-only", action="store_true", help="prepare the interpreter, check the kit, stop"
    )
    parser.add_argument(
        "--resume-from",
        nargs="+",
        metavar="RESULTS_TAR_GZ",
        help="earlier campaigns' results.tar.gz (another machine's): their runs "
        "recorded ok are not run again; tables and report are then made where "
        "the packs are imported",
    )
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--started", type=float, help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    """The campaign (prepared, then run inside its interpreter) or its dry run."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = command_line_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    if args.inside or args.dry_run:  # the machine's own interpreter may lack YAML
        if args.campaign:
            args.config = read_campaign_file(args.campaign)["config"] + (args.config or [])
        args.config = args.config or [CONFIG]
    if args.dry_run:
        return dry_run(args)
    if not (args.out or args.prepare_only):
        parser.error("--out is required (where the packed results go)")
    return run_campaign(args) if args.inside else outer(args)


if __name__ == "__main__":
    sys.exit(main())
