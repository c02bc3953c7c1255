"""Datasets of your own, from files in each format, through the workflow
(config/questions/own-data.yaml on the examples dlbench.data.own_examples
writes): a Keras model of your own trains on each on the three Keras 3
backends from the same weights, and their accuracies agree; the built-in
digits CNN trains on the image folder (resized to 28x28 grey) natively on
PyTorch beside Keras. A folder with an image that does not decode is
refused at its preparation: its cells are invalid with the image's path and
the rest runs. Editing one file plans that dataset's preparation and cells,
nothing else."""

import json
import shutil

import pandas as pd
import pytest
import yaml

from dlbench.data import own_examples
from testkit import REPO, copy_workflow, run_json, run_snakemake, write_config
from workflows import load_test_config

KERAS_3 = ["keras-tensorflow", "keras-jax", "keras-torch"]
NATIVE = "native-torch"
MODEL = "any_data_model"
DATASETS = ["shapes", "sentences", "gradients", "trees"]
THREADS = 1  # two one-thread runs at a time: the tests time nothing against each other
OWN_RUNS = {
    (dataset, backend): run_json(dataset, MODEL, backend, threads=THREADS)
    for dataset in DATASETS
    for backend in KERAS_3
}
CNN_RUNS = {b: run_json("shapes", "cnn", b, threads=THREADS) for b in ("keras-torch", NATIVE)}
BROKEN_RUN = run_json("broken", MODEL, "keras-torch", threads=THREADS)
TARGETS = [*OWN_RUNS.values(), *CNN_RUNS.values(), BROKEN_RUN, "results/summary.csv"]
CONFIG = "config/own-data-test.yaml"
# Small test sets (60 to 160 samples) after five epochs: one sample is 2 %.
TOLERANCE = 0.1


@pytest.fixture(scope="module")
def workflow(tmp_path_factory, built_workflow):
    """The workflow copy after its run, and Snakemake's output."""
    for environment in KERAS_3 + [NATIVE]:
        built_workflow.venv(environment)
    workdir = copy_workflow(
        tmp_path_factory.mktemp("own-data") / "workflow", built_workflow.path, KERAS_3 + [NATIVE]
    )
    entries = own_examples.write_all(workdir / "data")
    shutil.copytree(str(workdir / "data/shapes"), str(workdir / "data/broken"))
    cut = workdir / "data/broken/train/square/0003.png"
    cut.write_bytes(cut.read_bytes()[:60])
    question = yaml.safe_load((REPO / "config/questions/own-data.yaml").read_text())
    tests = load_test_config()
    broken = dict(entries["shapes"], train="data/broken/train", test="data/broken/test")
    relative = json.loads(json.dumps(entries).replace(str(workdir) + "/", ""))
    config = dict(
        question,
        repeats=1,
        threads=THREADS,
        accuracy_tolerance=TOLERANCE,
        probe_largest_size=tests["probe_largest_size"],
        backends={backend: tests["backends"][backend] for backend in KERAS_3 + [NATIVE]},
        own_datasets=dict(relative, broken=broken),
        workloads=[
            dict(entry, backends=KERAS_3 if entry["model"] == MODEL else list(CNN_RUNS))
            for entry in question["workloads"]
        ]
        + [dict(question["workloads"][0], dataset="broken", backends=["keras-torch"])],
    )
    write_config(workdir / CONFIG, config)
    done = run_snakemake(workdir, "--configfile", CONFIG, "-j2", *TARGETS)
    return workdir, done


def record(workdir, path):
    return json.loads((workdir / path).read_text())


def test_your_model_learns_each_format_alike_on_the_three_keras_3_backends(workflow):
    workdir, _ = workflow
    summary = pd.read_csv(workdir / "results/summary.csv")
    for dataset in DATASETS:
        accuracies = {}
        for backend in KERAS_3:
            ran = record(workdir, OWN_RUNS[(dataset, backend)])
            assert ran["status"] == "ok", (dataset, backend, ran.get("error"))
            accuracies[backend] = ran["test_accuracy"]
        classes = json.loads(
            (workdir / "results/models" / dataset / (MODEL + ".json")).read_text()
        )["output_shape"][1]
        assert min(accuracies.values()) > 1.0 / classes + 0.2, (dataset, accuracies)
        assert max(accuracies.values()) - min(accuracies.values()) <= TOLERANCE, accuracies
        rows = summary[(summary["dataset"] == dataset) & (summary["model"] == MODEL)]
        assert sorted(rows["backend"]) == sorted(KERAS_3) and set(rows["accuracy_parity"]) == {"ok"}


def test_what_was_read_from_the_files_is_what_the_model_got(workflow):
    workdir, _ = workflow
    checked = {d: record(workdir, "results/models/{}/{}.json".format(d, MODEL)) for d in DATASETS}
    assert {d: found["output_shape"][1] for d, found in checked.items()} == {
        "shapes": 3,
        "sentences": 2,
        "gradients": 4,
        "trees": 3,
    }
    words = record(workdir, OWN_RUNS[("sentences", "keras-jax")])
    # the embedding's rows are the vocabulary read from the ids (200), 16 wide
    assert words["parameters"] == 200 * 16 + 16 * 32 + 32 + 32 * 2 + 2
    trees = record(workdir, OWN_RUNS[("trees", "keras-torch")])
    assert trees["train_samples"] == 480  # a fifth of each class drawn for the test set


def test_the_built_in_cnn_runs_natively_on_your_images(workflow):
    workdir, _ = workflow
    for backend, path in CNN_RUNS.items():
        ran = record(workdir, path)
        assert ran["status"] == "ok", (backend, ran.get("error"))
        assert ran["test_accuracy"] > 1.0 / 3 + 0.1


def test_an_image_that_does_not_decode_makes_its_cells_invalid_and_says_where(workflow):
    workdir, done = workflow
    ran = record(workdir, BROKEN_RUN)
    assert ran["status"] == "invalid"
    where = "data/broken/train/square/0003.png does not decode"
    assert ran["reason"].startswith("dataset broken refused: own_datasets.broken.train: the image")
    assert where in ran["reason"]
    assert "dataset broken refused: " in done.stderr and where in done.stderr  # as it runs
    log = (workdir / "logs/prepare/broken.log").read_text()
    assert where in log and "Traceback" not in log
    summary = pd.read_csv(workdir / "results/summary.csv").set_index(["dataset", "backend"])
    assert summary.loc[("broken", "keras-torch"), "status"] == "invalid"


def test_editing_one_file_plans_that_dataset_and_its_cells_alone(workflow):
    workdir, _ = workflow
    table = workdir / "data/trees.csv"
    original = table.read_text()
    try:
        lines = original.splitlines(keepends=True)
        table.write_text("".join(lines[:-1]))  # one row fewer
        summary = run_snakemake(workdir, "--configfile", CONFIG, "--summary", *TARGETS).stdout
        rows = [line.split("\t") for line in summary.splitlines()[1:]]
        pending = sorted(path for path, *rest in rows if rest and rest[-1] != "no update")
        assert "results/data/trees.npz" in pending
        assert not [p for p in pending if p.startswith("results/data/") and "trees" not in p]
        runs = {p.split("/")[3] for p in pending if p.endswith("run.json")}
        assert runs == {"trees"}
    finally:
        table.write_text(original)
