"""Our measurements beside the published ones (workflow/resources/
published_results.csv, copied from the sources' papers and posts; ``read``
names each source as the tables show it, "source 002").

Absolute seconds on a K80 in 2017 and on this run's hardware do not
compare; rankings do. So each source's figures are divided by the fastest
framework's in the same source, workload and hardware, and ours by the
fastest of our backends that have a published counterpart on that
workload and hardware: 1 is the fastest, 2 takes twice as long.

Beside the rankings, for ours on a GPU in float32, the published seconds
scaled by the devices' peak float32 rates: the published GPU's datasheet
figure (the GPU that workflow/resources/published_hardware.csv names, its
peak from gpu_peaks.csv) over ours (the peak the
utilisation table measures MFU against: the GPU probe's rate, the
datasheet's where no probe ran), with ours unscaled and, for a published
total of N epochs, in that unit.
"""

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from dlbench import catalog  # noqa: E402
from dlbench.analysis import utilisation as utilisation_table  # noqa: E402
from dlbench.analysis.collect import point_labels  # noqa: E402
from dlbench.analysis.hardware import gpu_peak  # noqa: E402
from dlbench.analysis.plots_style import figure_and_axes, save  # noqa: E402
from dlbench.models import workloads
from dlbench.plan import matrix  # noqa: E402
from dlbench.record.fields import MEASURED

# The project's copy of the published figures is the shared reference's, byte
# for byte (tests/unit/test_overview.py keeps it so), and that names each
# comparison "seed NNN"; here a seed is only the random seed, so the sources
# are read as "source NNN" (the same number).
REFERENCE_SOURCE = r"\(seed (\d+)\)"
SOURCE = r"(source \1)"


def read(path):
    """The published figures (published_results.csv), each source's name
    ending in "(source NNN)"."""
    table = pd.read_csv(path)
    table["source"] = table["source"].str.replace(REFERENCE_SOURCE, SOURCE, regex=True)
    return table


# Published workload -> our model (each workload's PUBLISHED_AS; e.g.
# DeepLearningFrameworks' "cifar10_cnn" is our vgg_cifar), and which of our
# figures its metric is.
WORKLOADS = {
    alias: model
    for model in workloads.built_in()
    for alias in getattr(workloads.facts(model), "PUBLISHED_AS", ())
}
OUR_FIGURE = {
    "time_per_epoch": "steady_epoch_seconds",
    # Published as seconds for 10 (or 3) epochs, first epoch included; ours
    # is the steady state. Ratios to the fastest are what is compared.
    "train_time": "steady_epoch_seconds",
    "time_per_1000_images": "seconds_per_1000_samples",
}
# The epochs of a published train_time (seconds for N epochs, the first
# included): the CIFAR-10 CNN's rows say "10 epochs" in their notes; the
# IMDB GRU's were timed over 3 (DeepLearningFrameworks' notebook, as our
# imdb_gru workload and config train it; workflow/report/published.rst).
PUBLISHED_EPOCHS = {"cifar10_cnn": 10, "imdb_gru": 3}
# Published framework -> our backend. Gluon and the symbolic MXNet API are
# both MXNet here (ours is Gluon, hybridised); Lasagne ran on Theano, whose
# maintained successor is PyTensor. Caffe2 and Julia-Knet have no
# counterpart.
BACKENDS = {
    "Keras(TF)": "keras-tensorflow",
    "Keras(CNTK)": "keras2-cntk",
    "Keras(Theano)": "keras2-theano",
    "Keras(MXNet)": "keras-mxnet",
    "Tensorflow": "native-tensorflow",
    "PyTorch": "native-torch",
    "MXNet": "native-mxnet",
    "Gluon": "native-mxnet",
    "Chainer": "native-chainer",
    "CNTK": "native-cntk",
    "Lasagne(Theano)": "native-pytensor",
}

COLUMNS = [
    "workload",
    "framework",
    "backend",
    "source",
    "published_hardware",
    "metric",
    "published_value",
    "unit",
    "published_relative",
    "dataset",
    "our_hardware",
    "our_figure",
    "our_value",
    "published_relative_common",
    "our_relative_common",
    "published_rank",
    "our_rank",
    "published_peak_tflops",
    "our_peak_tflops",
    "our_peak_source",
    "published_scaled",
    "published_epochs",
    "our_in_published_unit",
    "notes",
]
# Our cell's columns besides dataset, model and backend (the utilisation
# table's key), as our_cells passes them on.
CELL_SETTING = [column for column in matrix.CELL if column not in ("dataset", "model", "backend")]
OURS = (
    ["dataset", "model", "backend", "our_hardware", "our_figure", "our_value"]
    + CELL_SETTING
    + ["accelerator", "first_epoch_seconds", "our_peak_tflops", "our_peak_source"]
)


def _relative(values):
    return values / values.min()


def _key(values):
    return tuple(str(value) for value in values)


def our_peak(cell, utilisation, gpu_model=None, peaks=None):
    """(TFLOP/s, source) of our cell's GPUs together in float32: the peak
    its MFU is measured against (the utilisation table's peak_gflops: the
    GPU probe's rate x GPUs, the datasheet's where no probe ran); where the
    table has no row for the cell (no FLOPs for its model: a workload only
    an imported record ran), the datasheet's for ``gpu_model`` in ``peaks``
    (gpu_peaks.csv); or (None, why not). ``utilisation``: its rows by
    ``_key`` of the cell columns."""
    if int(cell["devices"]) == 0 or cell["accelerator"] != "gpu":
        return None, "not scaled: ours ran on the CPU, the published figures are GPUs'"
    precision = cell.get("precision", catalog.FLOAT32)
    if precision != catalog.FLOAT32:
        return None, "not scaled: ours ran in {}, the published runs and peaks are float32".format(
            precision
        )
    row = utilisation.get(_key(cell[list(matrix.CELL)]))
    if row is None:
        if peaks is None:
            return None, "no peak: no utilisation row for the cell"
        gflops, source = utilisation_table.datasheet_peak(cell, gpu_model, peaks)
        if gflops is None:
            return None, "no peak: {}".format(source)
        return gflops / 1000, "datasheet: {}".format(source)
    if pd.isna(row["peak_gflops"]):
        return None, "no peak: {}".format(row["peak_source"])
    measured = utilisation_table.GPU_PROBE in str(row["peak_source"])
    return row["peak_gflops"] / 1000, "{}: {}".format(
        "measured" if measured else "datasheet (no GPU probe ran)", row["peak_source"]
    )


def our_cells(summary, metrics, utilisation=None, peaks=None):
    """Our measured cells of the published workloads with a published
    counterpart, each with its hardware named and, on a GPU in float32, its
    peak rate (``our_peak``; ``utilisation``: the utilisation table,
    ``peaks``: gpu_peaks.csv)."""
    setting = matrix.cell_columns("backend")
    cpus = metrics.groupby(setting)["cpu_model"].first()
    gpus = metrics.groupby(setting)["gpu_model"].first()
    rates = {}
    if utilisation is not None:
        for _, row in utilisation.iterrows():
            rates[_key(row[list(matrix.CELL)])] = row
    summary = summary.assign(setting=point_labels(summary))
    ours = summary[
        summary["model"].isin(WORKLOADS.values())
        & summary["backend"].isin(BACKENDS.values())
        & summary["status"].isin(MEASURED)
    ].copy()
    rows = []
    for key, cells in ours.groupby(setting):
        first = cells.iloc[0]
        dataset, model = first["dataset"], first["model"]
        on_gpus = int(first["devices"]) > 0 and first["accelerator"] == "gpu"
        processor = (gpus if on_gpus else cpus).get(key)
        hardware = "{} ({})".format(first["setting"], processor or "unrecorded")
        for figure in sorted(set(OUR_FIGURE.values())):
            measured = cells[cells[figure].notna()]
            if not len(measured):
                continue
            for _, cell in measured.iterrows():
                peak, source = our_peak(cell, rates, gpus.get(key), peaks)
                rows.append(
                    {
                        "dataset": dataset,
                        "model": model,
                        "backend": cell["backend"],
                        "our_hardware": hardware,
                        "our_figure": figure,
                        "our_value": cell[figure],
                        **{column: cell[column] for column in CELL_SETTING},
                        "accelerator": cell["accelerator"],
                        "first_epoch_seconds": cell.get("first_epoch_seconds"),
                        "our_peak_tflops": peak,
                        "our_peak_source": source,
                    }
                )
    frame = pd.DataFrame(rows, columns=OURS)
    for column in ("first_epoch_seconds", "our_peak_tflops"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def in_published_unit(joined):
    """Ours in the published figure's unit: for a published total of N
    epochs (train_time), our first epoch + (N - 1) steady epochs, where the
    summary has both; for a figure per epoch or per 1,000 images, ours as
    it is."""
    totals = joined["first_epoch_seconds"] + (joined["published_epochs"] - 1) * joined["our_value"]
    return totals.where(joined["metric"] == "train_time", joined["our_value"])


def published_peaks(hardware, peaks):
    """{published hardware: its GPU's datasheet float32 TFLOP/s}: ``hardware``
    (workflow/resources/published_hardware.csv) names each published
    hardware's GPU as nvidia-smi would, ``peaks`` (gpu_peaks.csv) holds the
    datasheets' figures, as for our own GPUs."""
    if hardware is None or peaks is None:
        return {}
    found = {}
    for _, row in hardware.iterrows():
        peak = gpu_peak(row["gpu_model"], peaks)
        found[row["hardware"]] = None if peak is None else float(peak["fp32_tflops"])
    return found


def side_by_side(published, summary, metrics, hardware=None, peaks=None, utilisation=None):
    """Every published figure, its ratio to the fastest of its source,
    workload and hardware, and beside it our measurement of the same
    framework on the same model (one row per hardware we measured; none
    where we did not run it). Where ours ran on a GPU in float32, the
    published figure scaled by the peak rates: the published GPUs'
    datasheet figures (``published_peaks`` of ``hardware`` and ``peaks``)
    over ours (``utilisation``: the utilisation table's peak_gflops)."""
    published = published.assign(
        model=published["workload"].map(WORKLOADS),
        backend=published["framework"].map(BACKENDS),
        our_figure=published["metric"].map(OUR_FIGURE),
    ).rename(columns={"hardware": "published_hardware", "value": "published_value"})
    group = ["source", "workload", "published_hardware", "metric"]
    published["published_relative"] = published.groupby(group)["published_value"].transform(
        _relative
    )
    published["published_peak_tflops"] = published["published_hardware"].map(
        published_peaks(hardware, peaks)
    )
    published["published_epochs"] = (
        published["workload"].map(PUBLISHED_EPOCHS).where(published["metric"] == "train_time")
    )
    ours = our_cells(summary, metrics, utilisation, peaks)
    joined = published.merge(ours, how="left", on=["model", "backend", "our_figure"])
    # The time the published run would take on a device of our peak rate,
    # were time inversely proportional to the peak (an upper bound on the
    # speed-up: small models are bound by kernel launches and memory).
    joined["published_scaled"] = (
        joined["published_value"] * joined["published_peak_tflops"] / joined["our_peak_tflops"]
    )
    joined["our_in_published_unit"] = in_published_unit(joined)
    # Rankings compare over the frameworks both sides measured: per source,
    # workload and hardware, and our dataset and hardware.
    common = joined[joined["our_value"].notna()]
    together = common.groupby(group + ["dataset", "our_hardware"])
    for side in ("published", "our"):
        value = common[side + "_value"]
        joined.loc[common.index, side + "_relative_common"] = value / together[
            side + "_value"
        ].transform("min")
        joined.loc[common.index, side + "_rank"] = together[side + "_value"].rank(method="dense")
    return joined[COLUMNS].sort_values(
        ["workload", "source", "published_hardware", "published_relative", "our_hardware"],
        ignore_index=True,
    )


PUBLISHED_COLOURS = ("tab:blue", "tab:orange", "tab:purple")
OURS_COLOURS = ("tab:green", "darkgreen", "limegreen")


def plot(table, output):
    """``figure_of``, written to ``output``."""
    save(figure_of(table), output)


def figure_of(table):
    """Per published workload we measured: the ratio to the fastest of
    every framework in each published source/hardware and in ours."""
    measured = table[table["our_value"].notna()]
    workloads = sorted(measured["workload"].unique())
    if not workloads:
        figure, axis = figure_and_axes(dpi=110, figsize=(7, 2))
        axis.axis("off")
        axis.text(0.5, 0.5, "No published workload was measured in this run.", ha="center")
        return figure
    figure, axes = figure_and_axes(
        len(workloads), 1, dpi=110, figsize=(12, 1.5 + 2.4 * len(workloads)), squeeze=False
    )
    for axis, workload in zip(axes[:, 0], workloads):
        rows = table[table["workload"] == workload]
        frameworks = sorted(rows.loc[rows["our_value"].notna(), "framework"].unique())
        published = rows[rows["our_value"].notna()].drop_duplicates(
            ["source", "published_hardware", "framework"]
        )
        ours = rows[rows["our_value"].notna()].drop_duplicates(["our_hardware", "framework"])
        series = [
            ("published: {}".format(hardware), group, "published_relative_common")
            for hardware, group in published.groupby("published_hardware")
        ] + [
            ("ours: {}".format(hardware), group, "our_relative_common")
            for hardware, group in ours.groupby("our_hardware")
        ]
        height = 0.8 / max(1, len(series))
        for index, (label, group, column) in enumerate(series):
            positions = [
                frameworks.index(f) + (index - (len(series) - 1) / 2) * height
                for f in group["framework"]
            ]
            ours = label.startswith("ours")
            # ours in greens, the published sources in blues and oranges
            colour = (OURS_COLOURS if ours else PUBLISHED_COLOURS)[index % 3]
            axis.plot(group[column], positions, "s" if ours else "o", color=colour, label=label)
            axis.hlines(positions, 1, group[column], color=colour, linewidth=1)
        axis.set_yticks(np.arange(len(frameworks)))
        axis.set_yticklabels(
            [
                "{} ({})".format(f, rows.loc[rows["framework"] == f, "backend"].iloc[0])
                for f in frameworks
            ],
            fontsize=8,
        )
        axis.axvline(1, color="black", linewidth=0.8)
        axis.set_xlim(left=0.95)
        axis.set_xlabel("time / fastest of the frameworks measured on both sides")
        axis.set_title(
            "{} (ours: {})".format(
                workload, ", ".join(sorted(rows.loc[rows["our_value"].notna(), "dataset"].unique()))
            )
        )
        axis.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    figure.tight_layout()
    return figure


CAPTION = (
    "Published figures beside ours, joined by workload and framework (MXNet and Gluon are both "
    "native-mxnet; Lasagne on Theano is native-pytensor). published_relative: the figure over "
    "the fastest framework's of the same source, workload and hardware, as published (1 = "
    "fastest). Absolute seconds on a K80 in 2017 and on our hardware do not compare as they "
    "are; rankings do: published_relative_common and our_relative_common divide by the fastest "
    "of the frameworks measured on both sides (per source and hardware, and per hardware we "
    "ran), and the ranks are among those. Training compares our steady-state epoch with the "
    "published epoch or total training time, feature extraction "
    "seconds per 1,000 images. Our dataset may be a stand-in (digits for MNIST, tiny generated "
    "CIFAR-10/IMDB/bAbI in the smoke run), named in the dataset column. "
    "Where ours ran on a GPU in float32, published_scaled = published_value x "
    "published_peak_tflops (the published GPU's datasheet float32 peak: 4.37 TFLOP/s for one "
    "GPU of a K80, 9.3 for a P100 PCIe) / our_peak_tflops (the peak our MFU divides by: the GPU "
    "probe's, else the datasheet's; our_peak_source says which): the time the published run "
    "would take at our peak rate. That bounds what a faster device gives, and flatters it: "
    "these small models are bound by launches and framework overhead as much as by arithmetic. "
    "Ours is never scaled; our_in_published_unit is ours in the published unit (for a total of "
    "published_epochs epochs, our first epoch + the rest at our steady epoch). CPU cells and "
    "other precisions are not scaled (our_peak_source says why)."
)
