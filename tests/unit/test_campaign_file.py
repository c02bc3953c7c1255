"""A GPU campaign file (config/campaigns/) and its dry run: which runs
each stage takes, in what order, and how long the records of earlier
campaigns say each should take; no GPU, no Snakemake run."""

import re

import pytest
import yaml

from dlbench.campaign import config_files, estimate, gpu_campaign, stage_order
from testkit import REPO, jobs_planned_on_one_gpu

CAMPAIGN_FILE = "config/campaigns/published-tables-on-a-gpu.yaml"
PUBLISHED = REPO / "config" / "questions" / "published-tables.yaml"
GPU_RECORDS = str(REPO / "records" / "gpu" / "runs")
# The first H200 campaign's float32 GPU stage of config/gpu.yaml (28 cells
# and cuDNN's LeNet): 21 runs in 371 s, then 7 in 138 s (docs/results-h200.md).
MEASURED_GPU_STAGE_SECONDS = 371 + 138


@pytest.fixture(autouse=True)
def in_the_project(monkeypatch):
    monkeypatch.chdir(REPO)  # a campaign file names its configs and schema from the project's root


def campaign_file_stages(done=frozenset()):
    campaign = stage_order.read_campaign_file(CAMPAIGN_FILE)
    return stage_order.campaign_file_stages(campaign["config"], campaign["stages"], done)


def test_the_gpu_config_runs_each_published_workload_as_the_published_tables_do():
    """Only what the config's comment names differs: generated data (the
    config's key), fewer epochs, no TensorFlow settings (no TensorFlow on the
    GPU machine) and the tf32 cells of DeepLearningFrameworks' three and LeNet."""
    published = {
        (w["dataset"], w["model"]): w for w in yaml.safe_load(PUBLISHED.read_text())["workloads"]
    }
    config = yaml.safe_load((REPO / "config" / "gpu-published.yaml").read_text())
    assert config["generated_data"] is True
    ours = {(w["dataset"], w["model"]): w for w in config["workloads"]}
    assert set(ours) == set(published)
    fewer = {}
    for key, workload in ours.items():
        theirs = dict(published[key])
        theirs.pop("backend_settings", None)
        mine = dict(workload)
        mine.pop("precision", None)
        if "epochs" in theirs:
            assert 3 <= mine["epochs"] <= theirs["epochs"], key
            if mine["epochs"] < theirs["epochs"]:
                fewer[key[1]] = (mine["epochs"], theirs["epochs"])
            mine["epochs"] = theirs["epochs"]
        assert mine == theirs, key
    assert {key[1] for key, w in ours.items() if w.get("precision")} == {
        "vgg_cifar",
        "resnet50",
        "imdb_gru",
        "lenet",
    }
    assert fewer == {
        "vgg_cifar": (3, 10),
        "mlp": (3, 20),
        "cnn": (3, 12),
        "deep_mnist": (3, 17),
        "hrnn": (3, 5),
        "cifar_cnn": (3, 10),
    }


def test_the_published_campaign_file_runs_the_most_wanted_first_and_every_run_once():
    stages = campaign_file_stages()
    names = [name for name, _ in stages]
    assert names == [
        "gpu probes, float32",
        "DeepLearningFrameworks' tables and the LeNet latency, float32",
        "gpu probes, tf32",
        "the same in TF32, against strict float32",
        "the 2017 Keras examples, float32",
        "the runs no stage selects",
        "tables and plots",
        "report",
    ]
    targets = dict(stages)
    runs = [path for name, paths in stages[:6] for path in paths if path.endswith("/run.json")]
    every = [path for _, path in config_files.planned_runs(["config/gpu-published.yaml"])]
    assert sorted(runs) == sorted(every) and len(runs) == len(set(runs)) == 58
    assert targets["the runs no stage selects"] == []
    first = targets["DeepLearningFrameworks' tables and the LeNet latency, float32"]
    assert len(first) == 17 and all("/precision=float32/" in p for p in first)
    assert {p.split("/")[4] for p in first} == {"vgg_cifar", "resnet50", "imdb_gru", "lenet"}
    assert [p for p in first if "native-cudnn" in p] == [
        p for p in first if "/mnist_generated/lenet/native-cudnn/" in p
    ]
    tf32 = targets["the same in TF32, against strict float32"]
    assert sorted(tf32) == sorted(p.replace("precision=float32", "precision=tf32") for p in first)
    keras = targets["the 2017 Keras examples, float32"]
    assert {p.split("/")[4] for p in keras} == {
        "mlp",
        "cnn",
        "deep_mnist",
        "hrnn",
        "cifar_cnn",
        "babi_rnn",
    }
    assert all("/devices=1/" in p for p in runs)
    assert targets["gpu probes, tf32"] == [
        targets["gpu probes, float32"][0].replace("float32", "tf32")
    ]


def test_a_resumed_campaign_file_leaves_out_what_earlier_packs_hold():
    everything = dict(campaign_file_stages())
    first = everything["DeepLearningFrameworks' tables and the LeNet latency, float32"]
    done = {first[0], everything["gpu probes, float32"][0]}
    resumed = campaign_file_stages(done)
    names = [name for name, _ in resumed]
    assert "gpu probes, float32" not in names and "report" not in names
    assert (
        dict(resumed)["DeepLearningFrameworks' tables and the LeNet latency, float32"] == first[1:]
    )


def test_a_stage_that_selects_no_planned_run_is_refused():
    with pytest.raises(SystemExit, match="selects {'model': 'vgg_cifar', 'precision': 'mixed"):
        stage_order.campaign_file_stages(
            ["config/gpu-published.yaml"],
            [{"name": "bf16", "select": [{"model": "vgg_cifar", "precision": "mixed_bfloat16"}]}],
        )


def test_a_campaign_file_the_schema_refuses_says_where(tmp_path):
    campaign = tmp_path / "campaign.yaml"
    campaign.write_text(yaml.safe_dump({"config": ["config/gpu.yaml"], "stages": [{"name": "x"}]}))
    with pytest.raises(SystemExit, match="'select' is a required property.*stages/0"):
        stage_order.read_campaign_file(str(campaign))


def record_of(**values):
    record = {
        "status": "ok",
        "task": "train",
        "backend": "native-torch",
        "model": "mlp",
        "dataset": "digits",
        "devices": 1,
        "compile": "eager",
        "started": "2026-11-26T06:12:52Z",
        "finished": "2026-11-26T06:13:02Z",
        "train_samples": 1000,
        "hyper": {"batch_size": 100},
        "first_epoch_seconds": 0.5,
        "steady_epoch_seconds": 0.1,
        "epochs": [{"seconds": 0.5}, {"seconds": 0.1}, {"seconds": 0.1}],
    }
    record.update(values)
    return record


def test_a_run_is_its_backends_start_and_its_steps_at_the_planned_size():
    timings = estimate.Timings([record_of()])
    # the start: 10 s of wall time less 0.7 s of epochs
    assert timings.start("native-torch") == (pytest.approx(9.3), "start: native-torch's")
    # 10 ms a step (0.1 s over 10 steps); cifar10_generated is 50,000 images
    entry = {"epochs": 3, "batch_size": 50}
    work = timings.training("native-torch", "mlp", entry, "cifar10_generated")
    assert work.seconds == pytest.approx(3 * 1000 * 0.01 + 0.4)
    assert work.basis == "step 10.0 ms from native-torch's mlp (1 record)"
    # a dataset the catalog does not size is sized by the records that ran it
    work = timings.training("native-torch", "mlp", {"epochs": 1, "batch_size": 100}, "digits")
    assert work.seconds == pytest.approx(10 * 0.01 + 0.4)


def test_a_step_without_its_own_record_comes_from_the_nearest_ones():
    records = [
        record_of(model="cnn", steady_epoch_seconds=0.2),
        record_of(backend="keras-torch", model="vgg_cifar", steady_epoch_seconds=0.5),
    ]
    timings = estimate.Timings(records)
    entry = {"epochs": 1, "batch_size": 100}
    # training: the backend's other models before the other backends' same model
    work = timings.training("native-torch", "vgg_cifar", entry, "digits")
    assert work.basis == "step 20.0 ms from native-torch's other models (1 record)"
    work = timings.training("keras-jax", "vgg_cifar", entry, "digits")
    assert work.basis == "step 50.0 ms from other backends' vgg_cifar (1 record)"


def test_the_generated_datasets_sizes_are_the_real_ones():
    assert estimate.train_samples("cifar10_generated", {}) == 50000
    assert estimate.train_samples("mnist_generated", {}) == 60000
    assert estimate.train_samples("imdb_generated", {}) == 25000
    assert estimate.train_samples("babi_generated", {"validation_split": 0.05}) == 950
    assert estimate.train_samples("mnist", {}) is None  # downloaded: the records say


def test_the_dry_run_of_the_gpu_config_comes_near_what_its_first_campaign_took(capsys):
    """The estimate of config/gpu.yaml's float32 GPU stage from the records
    the project keeps, against that stage's measured time: within a third."""
    assert gpu_campaign.main(["--dry-run", "--estimate-from", GPU_RECORDS]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if ": gpu runs, float32 (" in line)
    seconds = float(line.split("about ")[1].split(" s")[0])
    assert MEASURED_GPU_STAGE_SECONDS * 2 / 3 < seconds < MEASURED_GPU_STAGE_SECONDS * 4 / 3


def test_the_dry_run_lists_every_run_and_names_the_stage_the_budget_cuts(capsys):
    """The budget less the end kept for packing is the runs' (docs/gpus.md):
    540 s, 240 of them kept, leave 300 s; the stage cut off is the first
    whose end, as the dry run's clock gives it, is past them."""
    argv = [
        "--campaign",
        CAMPAIGN_FILE,
        "--dry-run",
        "--estimate-from",
        GPU_RECORDS,
        "--budget-seconds",
        "540",
    ]
    argv += ["--pack-reserve-seconds", "240", "--probe-seconds", "20"]
    assert gpu_campaign.main(argv) == 0
    out = capsys.readouterr().out
    stages = [line for line in out.splitlines() if line.startswith("stage ")]
    assert stages[0].startswith("stage 1: gpu probes, float32 (1 probes; about 20 s, 0:20 ")
    assert "stage 2: DeepLearningFrameworks' tables" in stages[1]
    assert "the runs no stage selects" not in out  # an empty stage is not shown
    assert "budget 540 s, 300 s of it for the runs" in out
    ends = {}
    for line in stages:
        found = re.match(r"stage \d+: (.+) \(.*, (\d+):(\d\d) from the start\)$", line)
        if found:
            ends[found.group(1)] = 60 * int(found.group(2)) + int(found.group(3))
    assert sorted(ends.values()) == list(ends.values()) and len(ends) >= 3
    cut = next(name for name, end in ends.items() if end > 540 - 240)
    assert out.split("stops in the stage ")[1].strip() == repr(cut)
    # every run is listed with what its estimate rests on
    runs = [line for line in out.splitlines() if line.startswith("    ")]
    assert len(runs) == 58 and all(" s  " in line and "start: " in line for line in runs)


def test_the_published_gpu_config_plans_its_runs_and_a_probe_per_precision():
    """As on the GPU machine (one GPU, as its CUDA_VISIBLE_DEVICES says):
    the 58 runs, the GPU's float32 and tf32 probes, the op tables of the
    runs' op profiles, and no py-spy runs (the campaign's time is for the
    timed runs)."""
    counts = jobs_planned_on_one_gpu("config/gpu-published.yaml")
    assert counts["bench"] == 58 and counts["gpu_probe"] == 2
    assert counts["op_tables"] == 1 and "python_stacks" not in counts
    assert "generate" in counts  # generated data, no download
