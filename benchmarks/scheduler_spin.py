"""What Snakemake's main process spends on re-reading its queue while jobs
wait, with its default rate limit (100 jobs a second) and with the workflow
profile's (``max-jobs-per-timespan`` in profiles/default/config.yaml).

A minimal workflow of as many jobs as a matrix's runs, each sleeping and
taking all of one resource (as timed runs take all of ``cpu_exclusive``):
one job at a time, the others ready and waiting. Each setting runs
alternately; the CPU is Snakemake's with its jobs' (sleep and touch: next to
nothing), the wall time includes its wait for its timers after the last job.

    .venv/bin/python benchmarks/scheduler_spin.py [--jobs 80] [--seconds 0.5] [--times 3]
"""

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE_DEFAULT = "100/1s"
WORKFLOW = """
rule all:
    input: expand("out/{{i}}.txt", i=range({jobs}))

rule wait:
    output: "out/{{i}}.txt"
    resources: whole=2
    shell: "sleep {seconds}; touch {{output}}"
"""


def profile_setting():
    with open(REPO / "profiles" / "default" / "config.yaml") as handle:
        return yaml.safe_load(handle)["max-jobs-per-timespan"]


def run(workdir, timespan):
    """Snakemake's CPU (user + system, with its jobs') and wall seconds."""
    for path in (workdir / "out").glob("*"):
        path.unlink()
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [snakemake, "-j2", "--resources", "whole=2", "-q", "--max-jobs-per-timespan", timespan],
        cwd=workdir,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(done.stdout + done.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=80, help="jobs of the minimal workflow")
    parser.add_argument("--seconds", type=float, default=0.5, help="each job's sleep")
    parser.add_argument("--times", type=int, default=3, help="runs of each setting")
    args = parser.parse_args()
    settings = [SNAKEMAKE_DEFAULT, profile_setting()]
    measured = {setting: [] for setting in settings}
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        workflow = WORKFLOW.format(jobs=args.jobs, seconds=args.seconds)
        (workdir / "Snakefile").write_text(workflow)
        for _ in range(args.times):
            for setting in settings:
                measured[setting].append(run(workdir, setting))
    for setting in settings:
        cpu = statistics.median(c for c, _ in measured[setting])
        wall = statistics.median(w for _, w in measured[setting])
        print(
            "max-jobs-per-timespan {}: {} jobs of {} s one at a time: median CPU {:.1f} s, "
            "wall {:.1f} s".format(setting, args.jobs, args.seconds, cpu, wall)
        )


if __name__ == "__main__":
    main()
