"""Time `snakemake --report` on the results already in this folder, and the
headless-Chromium check of the report it makes (tests/report_browser.py).

    .venv/bin/python benchmarks/report_time.py --configfile config/smoke-full.yaml --repeats 3

Prints each timing, their median, the report's size and how many results,
images and tables the browser found. Needs the workflow's results (make
smoke) and, for the browser check, chromium and chromium-driver.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
from report_browser import check_report  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configfile", default="config/smoke-full.yaml")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--screenshots", default=None, help="keep the screenshots here, one per result shown"
    )
    parser.add_argument("--report", default=None, help="keep the report here (an .html path)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="report-time-") as scratch:
        measure(args, Path(scratch))


def measure(args, scratch):
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    report = Path(args.report).resolve() if args.report else scratch / "report.html"
    seconds = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        subprocess.run(
            [snakemake, "--configfile", args.configfile, "--report", str(report)],
            cwd=REPO,
            check=True,
            capture_output=True,
        )
        seconds.append(time.perf_counter() - started)
        print("snakemake --report: {:.1f} s".format(seconds[-1]), flush=True)
    print(
        "median {:.1f} s over {} runs; report {:.1f} MB".format(
            statistics.median(seconds), len(seconds), report.stat().st_size / 2**20
        )
    )
    checked = check_report(
        report, args.screenshots or scratch / "screenshots", every_result=bool(args.screenshots)
    )
    print(
        "browser check: {seconds} s; {opened}/{results} results opened, {images} images, "
        "{tables} tables, {problems} problems".format(
            **dict(checked, problems=len(checked["problems"]))
        )
    )
    for problem in checked["problems"]:
        print("  problem:", problem)


if __name__ == "__main__":
    main()
