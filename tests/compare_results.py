"""Two results folders of the same config (a smoke before and after a change
to the code), table by table: the tables each has, and for each CSV table
in both its columns and its rows (by the columns that name a row: the
cell's, a workload's, a pair's). Prints what one has that the other has
not, and, for columns that are no measurement of time, how many values
differ. Exit status 1 where a table, a column or a row is missing on one
side.

    python tests/compare_results.py BEFORE/results AFTER/results [--renamed OLD=NEW ...]

``--renamed [TABLE:]OLD=NEW``: a word the change renamed (a column, or a word
in the tables' text), in every table or in the CSV table whose file name is
TABLE: BEFORE's columns and text cells take the new word before they are
compared, so that a change of names alone shows as the same columns and rows.
"""

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

# Columns that name a row, where a table has them.
KEYS = (
    "machine",
    "dataset",
    "model",
    "workload",
    "backend",
    "faster",
    "slower",
    "devices",
    "threads",
    "precision",
    "compile",
    "versions",
    "repeat",
    "epoch",
    "step",
    "stage",
    "pair",
)
# Columns whose values are timings, rates or what depends on them: expected
# to change from run to run.
TIMED = (
    "second",
    "_s",
    "_ms",
    "latency",
    "throughput",
    "rate",
    "gflops",
    "mfu",
    "ratio",
    "slowdown",
    "p_",
    "cv",
    "relative",
    "speed",
    "efficiency",
    "noisy",
    "significant",
    "vs fastest",
    "vs_fastest",
    "joules",
    "watts",
    "memory",
    "started",
    "load_average",
    "ci_",
    "median",
    "interval",
    "faster",
    "slower",
    "loss",
    "accuracy",
    "parity",
    "gap",
    "s/epoch",
    "s_per_",
    "gflop",
    "value",
    "rank",
)


def tables(folder):
    return {
        str(path.relative_to(folder)): path
        for path in sorted(Path(folder).rglob("*"))
        if path.is_file()
        and path.suffix in (".csv", ".md", ".html", ".png")
        and "/runs/" not in str(path)
        and "/checks/" not in str(path)
    }


def unordered_pairs(frame):
    """A pair of backends named as faster and slower is the same pair
    whichever was faster: keyed by the two names in order."""
    if "faster" in frame and "slower" in frame:
        names = frame[["faster", "slower"]].astype(str)
        frame = frame.assign(pair=names.min(axis=1) + " / " + names.max(axis=1))
        frame = frame.drop(columns=["faster", "slower"])
    return frame


def count_differing(left, right):
    """How many of two aligned columns' values differ (missing on both: the same)."""
    same = (left.astype(str) == right.astype(str)) | (left.isna() & right.isna())
    return int((~same).sum())


def renamed_frame(frame, renamed):
    """``frame`` with each renamed word replaced, whole words only, in its
    column names and its text cells."""
    if not renamed:
        return frame
    pattern = re.compile(r"\b({})\b".format("|".join(map(re.escape, renamed))))

    def new_words(text):
        return pattern.sub(lambda match: renamed[match.group(1)], text)

    frame = frame.rename(columns=new_words)
    for column in frame:
        frame[column] = frame[column].map(
            lambda value: new_words(value) if isinstance(value, str) else value
        )
    return frame


def renamed_in(table, renamed):
    """The renamed words that apply to ``table`` (a file name): {old: new}."""
    return {old: new for (scope, old), new in (renamed or {}).items() if scope in (None, table)}


def compare_csv(before, after, renamed=None):
    """(missing columns, extra columns, missing rows, extra rows, differing values)."""
    words = renamed_in(Path(before).name, renamed)
    old = unordered_pairs(renamed_frame(pd.read_csv(before), words))
    new = unordered_pairs(pd.read_csv(after))
    columns = (sorted(set(old) - set(new)), sorted(set(new) - set(old)))
    keys = [key for key in KEYS if key in old and key in new]
    if not keys:
        return columns + ((len(old) != len(new)) * [len(old) - len(new)], [], {})
    rows_old = set(map(tuple, old[keys].astype(str).values))
    rows_new = set(map(tuple, new[keys].astype(str).values))
    differing = {}
    shared = [c for c in old if c in new and c not in keys]
    if old[keys].astype(str).duplicated().any() or new[keys].astype(str).duplicated().any():
        return columns + (sorted(rows_old - rows_new), sorted(rows_new - rows_old), {})
    joined = old.assign(_key=old[keys].astype(str).agg("|".join, axis=1)).merge(
        new.assign(_key=new[keys].astype(str).agg("|".join, axis=1)), on="_key"
    )
    for column in shared:
        if any(word in column.lower() for word in TIMED):
            continue
        count = count_differing(joined[column + "_x"], joined[column + "_y"])
        if count:
            differing[column] = count
    return columns + (sorted(rows_old - rows_new), sorted(rows_new - rows_old), differing)


def main(before, after, renamed=None):
    old, new = tables(before), tables(after)
    missing = False
    for name in sorted(set(old) | set(new)):
        if name not in new or name not in old:
            print("{}: only {}".format(name, "before" if name in old else "after"))
            missing = True
            continue
        if not name.endswith(".csv"):
            continue
        lost, added, rows_lost, rows_added, differing = compare_csv(old[name], new[name], renamed)
        if lost or added or rows_lost or rows_added:
            missing = missing or bool(lost or rows_lost)
        parts = []
        if lost:
            parts.append("columns gone: {}".format(", ".join(lost)))
        if added:
            parts.append("columns new: {}".format(", ".join(added)))
        if rows_lost:
            parts.append("rows gone: {}".format(rows_lost[:5]))
        if rows_added:
            parts.append("rows new: {}".format(rows_added[:5]))
        if differing:
            parts.append("values differ: {}".format(differing))
        print("{}: {}".format(name, "; ".join(parts) or "same columns and rows"))
    return 1 if missing else 0


def renaming(text):
    """``[TABLE:]OLD=NEW`` as ((TABLE or None, OLD), NEW)."""
    scoped, separator, new = text.partition("=")
    scope, _, old = scoped.rpartition(":")
    if not (old and separator and new):
        raise argparse.ArgumentTypeError("{!r} is not [TABLE:]OLD=NEW".format(text))
    return (scope or None, old), new


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--renamed", type=renaming, action="append", default=[])
    arguments = parser.parse_args()
    sys.exit(main(arguments.before, arguments.after, dict(arguments.renamed)))
