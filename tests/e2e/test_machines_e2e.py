"""Two machines emulated on this one, compared in one report: the digits
workloads (a training workload on a Keras and a native backend, an
inference workload on the native one) on `machine: one-core` with
`threads: 1`, packed with `snakemake pack` and carried as an archive to
`machine: two-cores` with `threads: 2`, whose workflow imports it beside a
folder of bad records and the records an H200 wrote (records/gpu);
then its report in the browser."""

import hashlib
import json

import pandas as pd
import pytest
import yaml

import figures
from dlbench.analysis import collect, plots_comparisons
from report_browser import check_report
from testkit import REPO, copy_workflow, needs_browser, run_json, run_snakemake, write_config
from workflows import load_test_config

BACKENDS = ["keras-torch", "native-torch"]
INFERENCE_BACKEND = "native-torch"
GPU_RECORDS = REPO / "records" / "gpu" / "runs"
GPU_MACHINE = "vm-nvidia-h200"


def machine_config(workdir, machine, threads, **changes):
    smoke = yaml.safe_load((REPO / "config" / "smoke-full.yaml").read_text())
    by_model = {entry["model"]: entry for entry in smoke["workloads"]}
    workloads = [
        dict(by_model["mlp"], epochs=2, repeats=2, backends=BACKENDS),
        dict(
            {key: value for key, value in by_model["lenet"].items() if key != "trained_weights"},
            latency_samples=20,
            throughput_batches=3,
            # an inference workload through the comparison; the MLP's two backends
            # carry the interaction test
            backends=[INFERENCE_BACKEND],
        ),
    ]
    config = dict(
        smoke,
        machine=machine,
        threads=threads,
        backends={backend: smoke["backends"][backend] for backend in BACKENDS},
        workloads=workloads,
        # the built workflow checks both (each draw of shared weights is a
        # process that imports Keras and torch: six of them, 41 s of CPU on a Zen 3)
        equivalence_check={"steps": 0},
        initial_weights="own",
        # the machine's probe sized as in the tests' config: the tables need a rate
        probe_largest_size=load_test_config()["probe_largest_size"],
        **changes,
    )
    return str(write_config(workdir / "config" / "machine.yaml", config))


def digests(paths):
    return {str(path): hashlib.sha256(path.read_bytes()).hexdigest() for path in paths}


def bad_records(folder, good):
    """A folder of records that must be refused: truncated, of a record
    format this code does not read, and carrying the importing machine's
    name (its cell would collide with that machine's own)."""
    record = json.loads(good.read_text())
    made = {}
    for name, text in (
        ("truncated", good.read_text()[:100]),
        ("unknown_version", json.dumps(dict(record, record_version=99))),
        ("colliding", json.dumps(dict(record, machine="two-cores"))),
    ):
        path = folder / name / "run.json"
        path.parent.mkdir(parents=True)
        path.write_text(text)
        made[name] = path
    return made


@pytest.fixture(scope="module")
def compared(tmp_path_factory, built_workflow):
    """The two machines' workflows after one-core packed its results and
    two-cores imported them (and the bad folder) and made everything."""
    for backend in BACKENDS:
        built_workflow.venv(backend)
    base = tmp_path_factory.mktemp("machines")
    one = copy_workflow(base / "one-core", built_workflow.path, BACKENDS)
    run_snakemake(one, "--configfile", machine_config(one, "one-core", 1), "-j2", "pack")
    archive = one / "results" / "pack" / "one-core.tar.gz"
    bad = bad_records(
        base / "bad", one / run_json("digits", "mlp", BACKENDS[0], machine="one-core", threads=1)
    )
    carried = digests([archive, *bad.values()])
    two = copy_workflow(base / "two-cores", built_workflow.path, BACKENDS)
    imports = [str(archive), str(base / "bad"), str(GPU_RECORDS)]
    config = machine_config(two, "two-cores", 2, import_results=imports)
    run_snakemake(two, "--configfile", config, "-j2")
    return {"one": one, "two": two, "bad": bad, "carried": carried, "archive": archive}


def test_each_run_records_its_machine_and_the_threads_it_was_pinned_to(compared):
    for folder, machine, threads in (
        (compared["one"], "one-core", 1),
        (compared["two"], "two-cores", 2),
    ):
        for backend in BACKENDS:
            record = json.loads(
                (
                    folder / run_json("digits", "mlp", backend, machine=machine, threads=threads)
                ).read_text()
            )
            assert record["status"] == "ok", record["error"]
            assert record["machine"] == machine and record["threads"] == threads
            assert record["runtime"]["threads"] == threads


def test_timed_runs_took_turns(compared):
    """On each machine the timed runs never overlapped (concurrent_cpu_runs
    is off), whatever -j allowed."""
    for folder in (compared["one"], compared["two"]):
        paths = sorted((folder / "results" / "runs").rglob("run.json"))
        assert len(paths) == 5  # 4 mlp + 1 lenet runs
        spans = sorted(
            (record["started"], record["finished"])
            for record in (json.loads(path.read_text()) for path in paths)
        )
        for (_, finished), (started, _) in zip(spans, spans[1:]):
            assert finished <= started


def test_the_merged_summary_holds_both_machines_cells(compared):
    summary = pd.read_csv(compared["two"] / "results" / "summary.csv", dtype={"threads": str})
    cells = summary.groupby("machine")["backend"].count().to_dict()
    # the MLP on both backends, LeNet on one, and the 20 cells of the H200's records
    assert cells == {"one-core": 3, "two-cores": 3, GPU_MACHINE: 20}
    assert set(summary["status"]) == {"ok"}
    gpu = summary[(summary["machine"] == GPU_MACHINE) & (summary["devices"] == 1)]
    assert len(gpu) == 13 and set(gpu["accelerator"]) == {"gpu"}
    assert (gpu["peak_device_memory_mb"] > 0).all()


def test_the_comparison_has_ratios_ranks_and_the_interaction_test(compared):
    tables = compared["two"] / "results" / "tables"
    comparison = pd.read_csv(tables / "machines.csv")
    # this machine by default (a testbed: the machine, and its threads and compile mode
    # as they differ: the H200's runs name theirs)
    assert set(comparison["reference"]) == {"two-cores, threads=2, compile=auto"}
    emulated = comparison[comparison["machine"] != GPU_MACHINE]
    assert emulated["ratio_to_reference"].notna().all() and emulated["rank"].notna().all()
    # the H200's GPU cells have no counterpart on the reference: no ratio, never a made-up one
    on_gpu = comparison[(comparison["machine"] == GPU_MACHINE) & (comparison["devices"] == 1)]
    assert len(on_gpu) == 13 and on_gpu["ratio_to_reference"].isna().all()
    tested = pd.read_csv(tables / "machine_interaction.csv").set_index(["model", "devices"])
    assert 0 <= tested.loc[("mlp", 0), "p_value"] <= 1  # two repeats a cell: testable
    assert tested.loc[("lenet", 0), "test"].startswith("not tested")  # one repeat a cell
    assert tested.loc[("mlp", 1), "test"].startswith("not tested")  # the H200 alone
    table = (tables / "digits_mlp.md").read_text()
    assert "one-core, CPU" in table and "two-cores, CPU" in table
    assert "vm-nvidia-h200, 1 GPU, threads=all, compile=eager: s/epoch" in table


def test_bad_imported_records_are_refused_by_name_and_nothing_imported_changes(compared):
    verdicts = pd.read_csv(compared["two"] / "results" / "tables" / "imports.csv")
    refused = verdicts[~verdicts["accepted"]].set_index("record")["reason"].to_dict()
    bad = compared["bad"]
    assert set(refused) == {str(path) for path in bad.values()}
    assert "does not parse" in refused[str(bad["truncated"])]
    assert "record_version 99" in refused[str(bad["unknown_version"])]
    assert "this machine's name" in refused[str(bad["colliding"])]
    accepted = verdicts[verdicts["accepted"]]
    assert accepted["machine"].value_counts().to_dict() == {GPU_MACHINE: 20, "one-core": 5}
    one_core = accepted[accepted["machine"] == "one-core"]["record"]  # 4 mlp + 1 lenet runs
    assert all(record.startswith(str(compared["archive"])) for record in one_core)
    assert digests([compared["archive"], *bad.values()]) == compared["carried"]


def test_imported_records_say_what_their_environment_installed_and_versions_are_compared(
    compared,
):
    """Each carried record keeps what its venv installed; the versions table
    sets the machines' versions against each other where the hardware is the
    same: both ran the same pinned versions here (and on one thread against
    two), so it has no row, and the H200's records are not of this hardware."""
    records = json.loads((compared["two"] / "results/imported/records.json").read_text())
    carried = [record for record in records if record["machine"] == "one-core"]
    assert carried
    for record in carried:
        installed = record["environment_check"]["installed"]
        ran = record["runtime"]["framework_version"]
        assert installed["torch"].split("+")[0] == ran.split("+")[0]
    table = pd.read_csv(compared["two"] / "results/tables/versions.csv")
    assert table.empty and "newer_machine" in table.columns
    # its plot (not in the report) says so: no row to draw
    figure = plots_comparisons.versions_figure(
        collect.read_table(compared["two"] / "results/tables/versions.csv")
    )
    assert figures.png_shows(compared["two"] / "results/plots/versions.png", figure)
    assert [figures.texts(axis) for axis in figure.axes] == [["no two versions to compare"]]


def test_a_threads_list_plans_a_run_per_thread_count(compared):
    planned = run_snakemake(
        compared["two"], "--configfile", "config/machine.yaml", "-n", "--config", "threads=[1,2]"
    )
    text = planned.stdout + planned.stderr
    for threads in (1, 2):
        assert (
            run_json(
                "digits", "mlp", "native-torch", machine="two-cores", threads=threads, repeat=2
            )
            in text
        )
    assert "results/plots/digits_mlp_threads_scaling.png" in text


@needs_browser
def test_the_merged_report_shows_the_comparison_in_the_browser(compared):
    two = compared["two"]
    run_snakemake(two, "--configfile", "config/machine.yaml", "--report", "report.html")
    html = (two / "report.html").read_text()
    for name in ("machines.png", "machines.html", "machine_interaction.html", "imports.csv"):
        assert name in html
    checked = check_report(two / "report.html", two / "results" / "report_screenshots")
    assert checked["problems"] == []
    assert checked["opened"] == checked["results"]
    # workload x backend x devices: the emulated machines' 3 and the H200's 20, two shared
    assert checked["table_rows"]["results/tables/machines.html"] == 21


def test_the_published_figures_are_scaled_to_the_imported_h200s_peak(compared):
    """DeepLearningFrameworks' PyTorch ResNet-50 features on a K80 and a P100
    beside the H200's native torch: scaled by the published GPU's datasheet
    peak over the H200's (its datasheet's: the folder brought no probe, and
    its records predate the versions dimension); ours unscaled, in the
    published unit."""
    table = pd.read_csv(compared["two"] / "results" / "tables" / "published_comparison.csv")
    pytorch = table[
        (table["workload"] == "resnet50_features")
        & (table["framework"] == "PyTorch")
        & table["our_hardware"].str.contains(GPU_MACHINE, na=False)
    ].set_index("published_hardware")
    assert set(pytorch.index) == {"K80/CUDA 8/cuDNN 6", "P100/CUDA 8/cuDNN 6"}
    peaks = pd.read_csv(REPO / "workflow" / "resources" / "gpu_peaks.csv").set_index("gpu")
    for _, row in pytorch.iterrows():
        assert row["our_peak_source"].startswith("datasheet")
        assert row["our_peak_tflops"] == pytest.approx(peaks.loc["H200", "fp32_tflops"])
        expected = row["published_value"] * row["published_peak_tflops"] / row["our_peak_tflops"]
        assert row["published_scaled"] == pytest.approx(expected)
        assert row["our_in_published_unit"] == row["our_value"]  # seconds per 1,000 images
    assert pytorch.loc["K80/CUDA 8/cuDNN 6", "published_peak_tflops"] == pytest.approx(4.37)
