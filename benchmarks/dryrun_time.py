"""Time `snakemake -n` on a generated config of about 1,000 runs.

Every (dataset, model) the catalog has x every backend x repeats enough to
pass 1,000 runs, in a scratch copy of the workflow. Prints the run count and
the median wall time of three dry runs.

    .venv/bin/python benchmarks/dryrun_time.py
"""

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


def generated_config(target_runs=1000):
    with open(REPO / "config" / "smoke.yaml") as handle:
        smoke = yaml.safe_load(handle)
    template = {entry["model"]: entry for entry in smoke["workloads"]}
    workloads = [
        dict(template[model], dataset=dataset)
        for dataset, model in itertools.product(catalog.DATASETS, catalog.MODELS)
    ]
    cells = len(workloads) * len(catalog.BACKENDS)
    return dict(smoke, workloads=workloads, repeats=math.ceil(target_runs / cells)), cells


def main():
    config, cells = generated_config()
    with tempfile.TemporaryDirectory() as scratch:
        for part in ("Snakefile", "workflow", "envs", "config", "profiles", "src"):
            source = REPO / part
            copy = shutil.copytree if source.is_dir() else shutil.copy2
            copy(source, Path(scratch) / part)
        with open(Path(scratch) / "config" / "big.yaml", "w") as handle:
            yaml.safe_dump(config, handle)
        snakemake = str(Path(sys.executable).with_name("snakemake"))
        times = []
        for _ in range(3):
            start = time.perf_counter()
            done = subprocess.run(
                [snakemake, "-n", "--quiet", "--configfile", "config/big.yaml"],
                cwd=scratch,
                capture_output=True,
                text=True,
            )
            times.append(time.perf_counter() - start)
            if done.returncode != 0:
                sys.exit(done.stdout + done.stderr)
    runs = cells * config["repeats"]
    print(
        "snakemake -n: {} runs ({} cells x {} repeats): median {:.2f} s over 3 (all: {})".format(
            runs,
            cells,
            config["repeats"],
            statistics.median(times),
            ", ".join("{:.2f}".format(t) for t in times),
        )
    )


if __name__ == "__main__":
    main()
