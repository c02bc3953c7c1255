"""Two runs of the same workflow, timed figures against each other: did a
change (another commit, profiles on) move any cell's time?

    .venv/bin/python benchmarks/compare_timings.py BEFORE/results AFTER/results

For every cell of both (its headline: the steady epoch for training, the
median latency for inference) it prints the ratio after/before; where both
have two or more repeats, the significance test's Welch test on the log
times (dlbench.analysis.stats, Holm-corrected over those cells). The median
and spread of the ratios say how much two runs of one commit differ on this
machine; a cell is moved where the test says so at 5 %.
"""

import argparse
import statistics
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from dlbench.analysis import collect, stats  # noqa: E402
from dlbench.host import runtime  # noqa: E402
from dlbench.plan import matrix  # noqa: E402

CELL = [c for c in matrix.CELL if c != "machine"]


def headlines(results):
    metrics = pd.read_csv(Path(results) / "metrics.csv")
    ok = metrics[metrics["status"] == "ok"].copy()
    ok["headline"] = [row[collect.HEADLINE[row["task"]]] for _, row in ok.iterrows()]
    return ok.groupby(CELL + ["task"])["headline"].apply(list)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    args = parser.parse_args(argv)
    before, after = headlines(args.before), headlines(args.after)
    common = sorted(set(before.index) & set(after.index))
    rows, tested = [], []
    for key in common:
        a, b = before[key], after[key]
        ratio = statistics.median(b) / statistics.median(a)
        p = None
        if len(a) >= 2 and len(b) >= 2:
            _, _, _, p = stats.welch_log_ratio(a, b)
            if p is not None:
                tested.append(len(rows))
        rows.append(dict(zip(CELL + ["task"], key), ratio=ratio, p=p))
    found = pd.DataFrame(rows)
    if tested:
        adjusted = stats.holm([rows[i]["p"] for i in tested])
        found["p_holm"] = None
        for index, value in zip(tested, adjusted):
            found.loc[index, "p_holm"] = value
    print("CPU: {}; cells in both: {}".format(runtime.cpu_model(), len(found)))
    ratios = found["ratio"]
    print(
        "after/before per cell: median {:.3f}, quartiles {:.3f} to {:.3f}, range {:.3f} to "
        "{:.3f}".format(
            ratios.median(),
            ratios.quantile(0.25),
            ratios.quantile(0.75),
            ratios.min(),
            ratios.max(),
        )
    )
    if tested:
        moved = found[found["p_holm"].notna() & (found["p_holm"].astype(float) < 0.05)]
        print(
            "{} cells with repeats tested; moved at 5 % (Holm): {}".format(len(tested), len(moved))
        )
        if len(moved):
            print(moved.to_string(index=False))
    print(found.sort_values("ratio").to_string(index=False, float_format="{:.3f}".format))
    return 0


if __name__ == "__main__":
    sys.exit(main())
