"""The dropout verdicts of the equivalence check: each backend's dropout
draws set against the other backends' by a rank test, or against a named
backend's (``compare_dropout``)."""

from dlbench.analysis.equivalence_reference import PINNED, no_reference
from dlbench.record.fields import Status

# The dropout check's test. Each backend's training-mode forward passes give
# two statistics per draw (dlbench.run.equivalence.draw_statistics). A pass
# whose first draws are all the same draws no dropout: where most backends
# draw, such a backend departs (and one that draws where most do not); that
# is exact, not a test. Among the backends that draw, draws are independent,
# so under the null (the same dropout on both backends) a two-sided
# Mann-Whitney rank test of one backend's draws against another's rejects
# at its level whatever the statistics' distribution. A pair of backends
# differs where the test of either statistic rejects at alpha / (2 n)
# (Bonferroni over the two statistics and the backend's n comparisons); a
# backend departs where it differs from more than half of the others
# (against a named reference: from it). Under the null the chance that a
# backend differs from any other is at most alpha (the union of its 2 n
# tests), so alpha bounds each backend's false alarm rate; one departing
# backend makes the others differ from one backend only, which flags none.
DROPOUT_ALPHA = 1e-3
DROPOUT_STATISTICS = ("squared", "shift")
VERDICT_SAME_DROPOUT = "same dropout"
NO_DROPOUT = "no dropout in this model"


def dropout_rows(records):
    """One row per check record: its draws' statistics, or why none."""
    rows = []
    for record in records:
        row = {key: record.get(key) for key in ("dataset", "model", "backend")}
        row["versions"] = record.get("versions", PINNED)
        drawn = (record.get("check") or {}).get("dropout_draws")
        row["draws"], row["reason"] = None, None
        if record.get("status") != Status.OK:
            row["reason"] = "{}: {}".format(record.get("status"), record.get("reason") or "")
        elif not drawn:
            row["reason"] = "no dropout draws in the record"
        elif drawn.get("reason"):
            row["reason"] = drawn["reason"]
        else:
            row["draws"] = drawn
        rows.append(row)
    return rows


def pair_p_value(drawn, other):
    """Two backends' draws: the smallest two-sided Mann-Whitney p-value of
    the two statistics, times 2 (Bonferroni over them), at most 1."""
    from scipy import stats

    found = []
    for name in DROPOUT_STATISTICS:
        a, b = drawn[name], other[name]
        if len(set(a) | set(b)) == 1:  # the same constant: nothing to rank
            found.append(1.0)
        else:
            found.append(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return min(1.0, 2 * min(found))


def _ranked(row, others, alpha):
    """The rank test of a drawing backend against the other drawing ones."""
    import numpy

    p_values = [pair_p_value(row["draws"], other["draws"]) for other in others]
    differs = sum(p < alpha / len(others) for p in p_values) if others else 0
    result = {"p_value": float(numpy.median(p_values)) if p_values else None}
    if differs * 2 > len(others):
        result["departs"] = "differs from {} of {} backends".format(differs, len(others))
        result["verdict"] = "DEPARTS ({})".format(result["departs"])
    else:
        result["verdict"] = "{} (differs from {} of {})".format(
            VERDICT_SAME_DROPOUT, differs, len(others)
        )
    return result


def compare_dropout(records, reference="median", alpha=DROPOUT_ALPHA):
    """Per workload and backend (its pinned versions and any variant), its
    dropout draws against the other backends' (the test above):
    {(dataset, model, backend, versions): {"squared", "shift" (medians over
    the draws), "p_value" (the median of its pairs' p-values), "departs"
    (why, where it departs), "verdict"}}."""
    import numpy

    found = {}
    rows = dropout_rows(records)
    workloads = sorted({(row["dataset"], row["model"]) for row in rows}, key=str)
    for dataset, model in workloads:
        group = [row for row in rows if (row["dataset"], row["model"]) == (dataset, model)]
        drawn = [row for row in group if row["draws"] is not None]
        if reference == "median":
            judges = [row for row in drawn if row["versions"] == PINNED]
        else:
            judges = [r for r in drawn if r["versions"] == PINNED and r["backend"] == reference]
        drawing = [row for row in judges if row["draws"]["stochastic"]]
        most_draw = len(drawing) * 2 >= len(judges)
        for row in group:
            key = (dataset, model, row["backend"], row["versions"])
            if row["draws"] is None:
                found[key] = {"verdict": "not compared: " + row["reason"]}
                continue
            result = {name: float(numpy.median(row["draws"][name])) for name in DROPOUT_STATISTICS}
            found[key] = result
            others = [other for other in drawing if other is not row]
            if not any(other["draws"]["stochastic"] for other in drawn):
                result["verdict"] = NO_DROPOUT
            elif reference != "median" and row["backend"] == reference:
                result["verdict"] = "{} (the reference)".format(VERDICT_SAME_DROPOUT)
            elif len(judges) - any(j is row for j in judges) < (2 if reference == "median" else 1):
                result["verdict"] = no_reference(reference, "backends' draws")
            elif row["draws"]["stochastic"] != most_draw:
                judged = len([judge for judge in judges if judge is not row])
                result["departs"] = (
                    "draws afresh where most backends give the same outputs at every draw"
                    if row["draws"]["stochastic"]
                    else "the same outputs at every draw, where {} of {} backends draw "
                    "afresh".format(len(others), judged)
                )
                result["verdict"] = "DEPARTS ({})".format(result["departs"])
            elif not row["draws"]["stochastic"]:
                result["verdict"] = "{} (the same outputs at every draw, as most backends)".format(
                    VERDICT_SAME_DROPOUT
                )
            else:
                result.update(_ranked(row, others, alpha))
    return found
