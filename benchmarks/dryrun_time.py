"""Time `snakemake -n` on a generated config of about 1,000 runs.

Every (dataset, model) the catalog has that fit each other x every backend x
repeats enough to pass 1,000 runs, in a scratch copy of the workflow; each
workload's hyper-parameters are those of config/config.yaml, which defines
every model. Timings on a shared machine swing by 2x between minutes, so
each dry run alternates with one of a minimal workflow of as many trivial
jobs (Snakemake's own floor), and the median ratio is printed beside the
medians.

    .venv/bin/python benchmarks/dryrun_time.py [--runs 1000] [--times 5] [--threads 1,2,all]

``--threads`` makes CPU threads a dimension of that many values (every
cell once per value), to see what a dimension costs to plan.
"""

import argparse
import itertools
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
from dlbench import catalog  # noqa: E402
from dlbench.plan import matrix  # noqa: E402
from dlbench.registry import BUILT_IN  # noqa: E402

MINIMAL_WORKFLOW = """
rule all:
    input: expand("out/{{i}}.txt", i=range({jobs}))

rule make:
    output: "out/{{i}}.txt"
    shell: "touch {{output}}"
"""


def generated_config(target_runs=1000, threads=None):
    with open(REPO / "config" / "config.yaml") as handle:
        full = yaml.safe_load(handle)
    template = {entry["model"]: entry for entry in full["workloads"]}
    workloads = [
        dict(template[model], dataset=dataset, repeats=1)
        for dataset, model in itertools.product(BUILT_IN.datasets, BUILT_IN.models)
        if BUILT_IN.fits(model, dataset)
    ]
    config = dict(full, workloads=workloads, backends={b: None for b in catalog.BACKENDS})
    if threads:
        config["threads"] = threads
    cells = len(matrix.runs(matrix.normalise(config)))
    repeats = math.ceil(target_runs / cells)
    config["workloads"] = [dict(w, repeats=repeats) for w in workloads]
    return config, cells, repeats


def dry_run(workdir, *args):
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    start = time.perf_counter()
    done = subprocess.run(
        [snakemake, "-n", "--quiet", *args], cwd=workdir, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(done.stdout + done.stderr)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="at least this many runs")
    parser.add_argument("--times", type=int, default=5, help="dry runs of each workflow")
    parser.add_argument(
        "--threads",
        type=lambda text: [int(t) if t.isdigit() else t for t in text.split(",")],
        help="CPU threads as a dimension: comma-separated values (1,2,all)",
    )
    args = parser.parse_args()
    config, cells, repeats = generated_config(args.runs, args.threads)
    runs = len(matrix.runs(config))
    with tempfile.TemporaryDirectory() as scratch:
        for part in ("Snakefile", "workflow", "envs", "config", "profiles", "src"):
            source = REPO / part
            copy = shutil.copytree if source.is_dir() else shutil.copy2
            copy(source, Path(scratch) / part)
        with open(Path(scratch) / "config" / "big.yaml", "w") as handle:
            yaml.safe_dump(config, handle)
        floor = Path(scratch) / "floor"
        floor.mkdir()
        (floor / "Snakefile").write_text(MINIMAL_WORKFLOW.format(jobs=runs))
        ours, minimal = [], []
        for _ in range(args.times):
            ours.append(dry_run(scratch, "--configfile", "config/big.yaml"))
            minimal.append(dry_run(floor))
    ratio = statistics.median(o / m for o, m in zip(ours, minimal))
    print(
        "snakemake -n: {} runs ({} cells x {} repeats): median {:.2f} s; a minimal workflow "
        "of {} trivial jobs, timed alternately: median {:.2f} s; median ratio {:.2f}".format(
            runs,
            cells,
            repeats,
            statistics.median(ours),
            runs,
            statistics.median(minimal),
            ratio,
        )
    )


if __name__ == "__main__":
    main()
