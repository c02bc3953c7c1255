"""Time to first step: what a run spends before its steady state, stage by
stage (rules cold_start and plot_cold_start).

Each run record's ``cold_start`` (dlbench.run.harness) splits it: the process
started to the harness running (interpreter, library), the framework's
import and set-up, the data loaded, the model built (shared weights loaded),
then the first training step (trace, compile, autotune: waited for) and the
rest of the first epoch; or, for inference, the first call and the rest of
the warm-up. The table gives each cell's medians over its repeats.
"""

import pandas as pd

from dlbench.analysis import collect
from dlbench.plan import matrix
from dlbench.record.fields import Status

BEFORE = ["launch", "framework_setup", "data_load", "model_build"]
STAGES = {
    "train": BEFORE + ["first_step", "first_epoch_rest"],
    "infer": BEFORE + ["first_call", "warmup_rest"],
}
# The metrics' columns (collect.COLD_START), the stages in name order, then their sum.
COLUMNS = sorted(stage + "_seconds" for stage in collect.COLD_START if stage != "to_first_step")
COLUMNS += ["to_first_step_seconds"]
LABELS = {
    "launch": "process start",
    "framework_setup": "framework import and set-up",
    "data_load": "data load",
    "model_build": "model build",
    "first_step": "first step / call",
    "first_call": "first step / call",
    "first_epoch_rest": "rest of first epoch / warm-up",
    "warmup_rest": "rest of first epoch / warm-up",
}
CAPTION = (
    "Time to first step: what each run spends before its steady state, in seconds (medians "
    "over repeats). process start: the supervisor starting the run's process to the harness "
    "running (interpreter and library); framework: its import and set-up; data; model build "
    "(with the shared weights loaded); first step: the first training step, waited for, with "
    "whatever the framework traces, compiles or autotunes there (inference: the first call); "
    "then the rest of the first epoch (the rest of the warm-up). to first step: their sum up "
    "to the first step or call. The first epoch is reported apart from the steady state "
    "everywhere else; this splits it. compile cache: whether the runs found what earlier runs "
    "in their environment compiled (Theano's and PyTensor's ops, Inductor's kernels, JAX's "
    "programs where the config keeps them), which shortens the first step: warm, cold, or warm "
    "in k of n runs; blank where the run keeps no compiled code."
)


def cache_state(found):
    """The cell's runs' ``compile_cache_warm``: warm, cold, warm in k of n,
    or None where none of them kept compiled code."""
    known = [bool(value) for value in found if value is not None and not pd.isna(value)]
    if not known:
        return None
    warm = sum(known)
    if warm in (0, len(known)):
        return "warm" if warm else "cold"
    return "warm in {} of {}".format(warm, len(known))


def table(metrics):
    """One row per cell that ran and recorded its cold start (older records
    did not): its stages' medians and the steady state beside them."""
    ran = metrics[metrics["status"] == Status.OK]
    present = [column for column in COLUMNS if column in ran]
    keys = [column for column in matrix.CELL if column in ran] + ["task", "accelerator"]
    scale = ["first_epoch_seconds", "steady_epoch_seconds", "latency_p50_ms"]
    scale = [column for column in scale if column in ran]
    if ran.empty or not present:
        return pd.DataFrame(columns=keys + ["compile_cache"] + COLUMNS + scale)
    cells = ran.groupby(keys, dropna=False)
    found = cells[present + scale].median().reset_index()
    caches = ran.get("compile_cache_warm", pd.Series(None, index=ran.index, dtype=object))
    found.insert(len(keys), "compile_cache", list(caches.groupby(cells.ngroup()).agg(cache_state)))
    for column in COLUMNS:
        if column not in found:
            found[column] = float("nan")
    found = found[found[COLUMNS].notna().any(axis=1)]
    return found.sort_values(["dataset", "model", "to_first_step_seconds"], ignore_index=True)


def shown(found):
    """The table as people read it: the workload, the backend and its
    setting, each stage."""
    rows = []
    settings = collect.point_labels(found) if len(found) else []
    for (_, row), setting in zip(found.iterrows(), settings):
        shown_row = {
            "workload": "{}/{}".format(row["dataset"], row["model"]),
            "backend": row["backend"] + (" ({})".format(setting) if setting else ""),
            "compile cache": row["compile_cache"] if isinstance(row["compile_cache"], str) else "",
        }
        for stage in STAGES[row["task"]]:
            value = row[stage + "_seconds"]
            label = LABELS[stage]
            shown_row[label] = None if pd.isna(value) else round(float(value), 3)
        total = row["to_first_step_seconds"]
        shown_row["to first step"] = None if pd.isna(total) else round(float(total), 3)
        rows.append(shown_row)
    return pd.DataFrame(rows)


def plot(found, path):
    """``figure_of``, written to ``path``."""
    from dlbench.analysis.plots_style import save

    save(figure_of(found), path)


def figure_of(found):
    """Stacked bars, one per backend and setting, a panel per workload."""
    import matplotlib

    from dlbench.analysis.plots_style import figure_and_axes

    readable = shown(found)
    workloads = list(dict.fromkeys(readable["workload"])) if len(readable) else []
    stages = list(dict.fromkeys(LABELS.values()))
    colours = matplotlib.colormaps["tab10"].colors
    heights = [max(1, int((readable["workload"] == w).sum())) for w in workloads] or [1]
    height = 1.2 + 0.32 * sum(heights) + 0.5 * len(heights)
    figure, axes = figure_and_axes(
        len(heights),
        1,
        dpi=110,
        figsize=(9, height),
        gridspec_kw={"height_ratios": heights},
        squeeze=False,
    )
    for axis, workload in zip(axes[:, 0], workloads):
        rows = readable[readable["workload"] == workload].iloc[::-1]
        left = [0.0] * len(rows)
        for number, stage in enumerate(stages):
            widths = [0.0 if pd.isna(value) else value for value in rows[stage]]
            axis.barh(rows["backend"], widths, left=left, color=colours[number], label=stage)
            left = [a + b for a, b in zip(left, widths)]
        axis.set_title(workload, fontsize=9, loc="left")
        axis.tick_params(labelsize=8)
    if not workloads:
        axes[0, 0].text(0.5, 0.5, "no run finished", ha="center", va="center")
    axes[-1, 0].set_xlabel("seconds from the run's process start")
    handles, names = axes[0, 0].get_legend_handles_labels()
    if handles:
        figure.legend(handles, names, loc="upper center", ncol=3, fontsize=8, frameon=False)
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.7 / height))  # the legend's two rows on top
    return figure
