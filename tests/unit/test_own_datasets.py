"""Datasets of the user's own (config ``own_datasets``): each format read
from files the tests write (dlbench.data.own_examples and smaller ones),
what planning finds in their headers, what the preparation writes, and
every mistake refused in one line that says where: at planning (the
config's validation) or at the preparation. The runs on them:
tests/e2e/test_own_data_e2e.py."""

import copy
import csv
import json

import numpy as np
import pytest
from snakemake.utils import validate

from dlbench import catalog
from dlbench.data import own_datasets, own_examples, own_preparation
from dlbench.data.npz_writer import NpzWriter
from dlbench.data.own_datasets import DataRefused
from dlbench.plan import config_registry, config_rules, matrix
from testkit import REPO

SCHEMA = str(REPO / "workflow" / "schemas" / "config.schema.yaml")


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """The example datasets of every format, and their entries."""
    folder = tmp_path_factory.mktemp("own")
    return folder, own_examples.write_all(folder)


def prepared(entry, tmp_path, name="mine"):
    meta = own_preparation.prepare(name, entry, tmp_path / "prepared.npz", log=lambda _: None)
    with np.load(str(tmp_path / "prepared.npz"), allow_pickle=False) as arrays:
        found = {key: arrays[key] for key in arrays.files}
    assert json.loads(str(found.pop("meta"))) == meta
    return found, meta


def refused(entry, tmp_path, name="mine"):
    with pytest.raises(DataRefused) as caught:
        own_preparation.prepare(name, entry, tmp_path / "prepared.npz", log=lambda _: None)
    assert not (tmp_path / "prepared.npz").exists()
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def probe_refused(entry, name="mine"):
    with pytest.raises(DataRefused) as caught:
        own_datasets.probe(name, entry)
    assert "\n" not in str(caught.value)
    return str(caught.value)


def npz(path, **arrays):
    np.savez(str(path), **arrays)
    return {"format": "npz", "train": str(path)}


# Each format read


def test_every_format_is_read_from_its_files(examples, tmp_path):
    folder, entries = examples
    probes = {name: own_datasets.probe(name, entry) for name, entry in entries.items()}
    assert {name: (p.input_shape, p.values, p.input_kind) for name, p in probes.items()} == {
        "shapes": ((28, 28, 1), "images", "image28"),  # resized to 28x28 grey: the digits' kind
        "sentences": ((40,), "word_ids", "own"),
        "gradients": ((20, 20, 1), "images", "own"),  # grey images get their channel axis
        "trees": ((40,), "floats", "own"),
    }
    assert len(probes["shapes"].files) == 3 * (100 + 20)  # every image is an input of the rule

    images, meta = prepared(entries["shapes"], tmp_path)
    assert images["x_train"].shape == (300, 28, 28, 1) and images["x_test"].shape == (60, 28, 28, 1)
    assert images["x_train"].dtype == np.float32 and 0 <= images["x_train"].min()
    assert images["x_train"].max() <= 1
    assert meta["class_names"] == ["disc", "square", "stripes"] and meta["classes"] == 3
    assert list(images["y_train"][:12]) != sorted(images["y_train"][:12])  # classes mixed

    words, meta = prepared(entries["sentences"], tmp_path)
    assert words["x_train"].dtype == np.int32 and words["x_train"].shape == (400, 40)
    assert meta["vocabulary"] == 200 and meta["classes"] == 2

    trees, meta = prepared(entries["trees"], tmp_path)
    assert trees["x_train"].shape == (480, 40) and trees["x_test"].shape == (120, 40)
    assert meta["class_names"] == list(own_examples.SPECIES)


def test_a_seeded_split_draws_each_class_in_its_share(examples, tmp_path):
    _, entries = examples
    found, meta = prepared(entries["gradients"], tmp_path)
    y = np.load(entries["gradients"]["train"]["y"])
    counts = np.bincount(y, minlength=4)
    assert np.array_equal(np.bincount(found["y_test"], minlength=4), np.round(counts * 0.2))
    again, _ = prepared(entries["gradients"], tmp_path)
    assert np.array_equal(again["y_train"], found["y_train"])  # the same seed, the same split
    other, _ = prepared(dict(entries["gradients"], split_seed=1), tmp_path)
    assert not np.array_equal(other["y_train"], found["y_train"])


def test_one_hot_and_whole_number_labels_are_class_ids(tmp_path):
    x = np.random.RandomState(0).random_sample((8, 3))
    one_hot = np.eye(2)[[0, 1, 0, 1, 0, 1, 0, 1]]
    entry = npz(tmp_path / "a.npz", x_train=x, y_train=one_hot, x_test=x, y_test=one_hot)
    found, meta = prepared(entry, tmp_path)
    assert list(found["y_train"]) == [0, 1] * 4 and meta["classes"] == 2
    entry = npz(tmp_path / "b.npz", x=x, y=np.array([0.0, 1.0, 2.0] * 2 + [0.0, 1.0]))
    assert prepared(entry, tmp_path)[1]["classes"] == 3


def test_a_csv_label_column_of_numbers_counts_the_values_it_holds(tmp_path):
    path = tmp_path / "t.csv"
    rows = [[i * 0.5, i % 3 + 1] for i in range(30)]  # labels 1, 2, 3: three classes
    with open(str(path), "w", newline="") as handle:
        csv.writer(handle).writerows([["a", "label"]] + rows)
    found, meta = prepared({"format": "csv", "train": str(path)}, tmp_path)
    assert meta["classes"] == 3 and meta["class_names"] == ["1", "2", "3"]


def test_the_streamed_npz_is_what_numpy_writes(tmp_path):
    x = np.arange(30, dtype="float32").reshape(5, 3, 2)
    with NpzWriter(tmp_path / "s.npz") as out:
        out.stream("x", x.shape, "float32", (x[:2], x[2:4], x[4:]))
        out.add("y", np.arange(5))
    with np.load(str(tmp_path / "s.npz"), allow_pickle=False) as arrays:
        assert np.array_equal(arrays["x"], x) and list(arrays["y"]) == list(range(5))
    with pytest.raises(ValueError, match="4 rows written of 5"):
        with NpzWriter(tmp_path / "t.npz") as out:
            out.stream("x", x.shape, "float32", (x[:4],))


# Refused at planning: the config's validation, before any job


def config_with(smoke_config, entries, dataset, model="any_data_model"):
    config = copy.deepcopy(smoke_config)
    config["own_datasets"] = entries
    config["custom_models"]["any_data_model"] = {"file": str(REPO / "examples/any_data_model.py")}
    workload = dict(config["workloads"][0], dataset=dataset, model=model, repeats=1)
    config["workloads"] = [workload]
    validate(config, SCHEMA)
    return config


def planning_refusal(smoke_config, entries, dataset, model="any_data_model"):
    with pytest.raises(matrix.ConfigError) as caught:
        config_rules.validate(config_with(smoke_config, entries, dataset, model))
    return str(caught.value)


def test_a_dataset_of_the_digits_kind_runs_the_built_in_workloads_natively(smoke_config, examples):
    _, entries = examples
    config = config_with(smoke_config, entries, "shapes", model="cnn")
    config_rules.validate(config)
    registry = config_registry.registry_of(config)
    assert registry.is_own("shapes") and registry.fits("cnn", "shapes")
    assert registry.not_applicable("native-torch", "train", model="cnn") is None
    assert registry.datasets["shapes"][catalog.OWN]["definition"] == entries["shapes"]


def test_a_model_that_does_not_fit_the_data_is_refused_with_its_shape(smoke_config, examples):
    _, entries = examples
    message = planning_refusal(smoke_config, entries, "trees", model="cnn")
    assert message == (
        "workloads[0].model: model 'cnn' does not fit dataset 'trees' (input own, samples of "
        "shape [40]); it takes inputs ['image28']"
    )


def test_a_missing_file_or_folder_is_refused_at_planning(smoke_config, examples, tmp_path):
    _, entries = examples
    gone = dict(entries["shapes"], test=str(tmp_path / "nothing"))
    message = planning_refusal(smoke_config, dict(entries, shapes=gone), "shapes")
    assert message.startswith("own_datasets.shapes.test: no folder ")
    gone = dict(entries["trees"], train="data/trees.csv")
    message = planning_refusal(smoke_config, dict(entries, trees=gone), "trees")
    assert message == (
        "own_datasets.trees.train: no file data/trees.csv (paths are relative to the working "
        "directory)"
    )


def test_a_name_of_a_built_in_dataset_is_refused(smoke_config, examples):
    _, entries = examples
    message = planning_refusal(smoke_config, {"digits": entries["trees"]}, "digits")
    assert message == "own_datasets.digits: a built-in dataset has that name; choose another"


def test_arrays_of_different_lengths_are_refused_at_planning(tmp_path):
    entry = npz(tmp_path / "a.npz", x=np.zeros((10, 3)), y=np.zeros(9, "int64"))
    assert probe_refused(entry) == (
        "own_datasets.mine: x has 10 samples and y 9: one label per sample"
    )
    np.save(str(tmp_path / "x.npy"), np.zeros((10, 3)))
    np.save(str(tmp_path / "y.npy"), np.zeros(11, "int64"))
    entry = {"format": "npy", "train": {"x": str(tmp_path / "x.npy"), "y": str(tmp_path / "y.npy")}}
    assert "train.x has 10 samples and train.y 11" in probe_refused(entry)


def test_arrays_named_otherwise_and_labels_of_text_are_refused_at_planning(tmp_path):
    entry = npz(tmp_path / "a.npz", inputs=np.zeros((4, 3)), targets=np.zeros(4))
    assert probe_refused(entry) == (
        "own_datasets.mine.train: {} holds the arrays ['inputs', 'targets']: name them x_train, "
        "y_train (and x_test, y_test), or x and y".format(tmp_path / "a.npz")
    )
    entry = npz(tmp_path / "b.npz", x=np.zeros((4, 3)), y=np.array(["cat", "dog"] * 2))
    assert "y is <U3 of shape (4,): labels are integers" in probe_refused(entry)
    (tmp_path / "c.npz").write_text("not a zip")
    assert "is not an .npz" in probe_refused({"format": "npz", "train": str(tmp_path / "c.npz")})


def test_a_csv_without_its_label_column_is_refused_at_planning(examples):
    _, entries = examples
    message = probe_refused(dict(entries["trees"], label="kind"))
    assert message.startswith("own_datasets.mine.train: ")
    assert "has no column 'kind' (its columns: f0, f1," in message
    assert message.endswith("name the label column with own_datasets.mine.label")


def test_an_image_folder_needs_class_folders_with_images_and_a_size(examples, tmp_path):
    _, entries = examples
    (tmp_path / "one" / "cats").mkdir(parents=True)
    (tmp_path / "one" / "cats" / "a.png").write_bytes(b"")
    entry = dict(entries["shapes"], train=str(tmp_path / "one"), test=None)
    assert "has 1 class folder: put each class's images" in probe_refused(entry)
    (tmp_path / "one" / "dogs").mkdir()
    (tmp_path / "one" / "dogs" / "notes.txt").write_text("no image")
    assert "the class folder {} holds no images".format(tmp_path / "one" / "dogs") in (
        probe_refused(entry)
    )
    sized = {k: v for k, v in entries["shapes"].items() if k != "image_size"}
    assert probe_refused(sized).startswith("own_datasets.mine.image_size: an images dataset needs")


def test_a_class_without_a_test_folder_is_refused_at_planning(examples, tmp_path):
    folder, entries = examples
    import shutil

    shutil.copytree(str(folder / "shapes" / "test"), str(tmp_path / "test"))
    shutil.rmtree(str(tmp_path / "test" / "stripes"))
    entry = dict(entries["shapes"], test=str(tmp_path / "test"))
    assert probe_refused(entry) == (
        "own_datasets.mine.test: the class stripes has no test sample (no folder)"
    )


def test_a_key_of_another_format_and_a_misshapen_path_are_refused(examples):
    _, entries = examples
    assert probe_refused(dict(entries["sentences"], label="y")) == (
        "own_datasets.mine.label: only format csv reads it; leave it out for format npz"
    )
    npy = dict(entries["gradients"], train=entries["gradients"]["train"]["x"])
    assert probe_refused(npy) == (
        "own_datasets.mine.train: format npy names two files, {x: ..., y: ...}"
    )


# Refused at the preparation: the data read


def test_labels_that_are_neither_ids_nor_one_hot_are_refused(tmp_path):
    x = np.zeros((4, 3), "float32")
    message = refused(npz(tmp_path / "a.npz", x=x, y=np.array([0, 1, 0.5, 1])), tmp_path)
    assert message == (
        "own_datasets.mine: y holds labels that are not whole numbers (sample 2: 0.5): labels "
        "are class ids (0 to classes - 1) or one-hot rows"
    )
    rows = np.array([[1, 0], [0, 1], [0.5, 0.5], [1, 0]])
    assert "y has rows that are not one-hot (sample 2:" in refused(
        npz(tmp_path / "b.npz", x=x, y=rows), tmp_path
    )
    assert refused(npz(tmp_path / "c.npz", x=x, y=np.array([0, 1, -1, 1])), tmp_path) == (
        "own_datasets.mine: y holds the label -1 (sample 2): class ids are 0 to classes - 1"
    )


def test_a_class_with_no_test_sample_is_refused(tmp_path):
    x = np.zeros((6, 2), "float32")
    entry = npz(
        tmp_path / "a.npz",
        x_train=x,
        y_train=np.array([0, 1, 2] * 2),
        x_test=x[:2],
        y_test=np.array([0, 1]),
    )
    assert refused(entry, tmp_path) == "own_datasets.mine: the class 2 has no test sample"
    entry = npz(tmp_path / "b.npz", x=x, y=np.array([0, 0, 0, 1, 1, 2]))
    assert refused(entry, tmp_path) == (
        "own_datasets.mine: the class 2 has one sample: none is left for the test set (give "
        "more, or a test set)"
    )


def test_nan_and_infinite_values_are_counted_and_located(tmp_path):
    x = np.zeros((10, 3))
    x[4, 1], x[7, 2], x[8, 0] = np.nan, np.inf, np.nan
    entry = npz(
        tmp_path / "a.npz",
        x_train=x,
        y_train=np.arange(10) % 2,
        x_test=x[:4],
        y_test=np.arange(4) % 2,
    )
    assert refused(entry, tmp_path) == (
        "own_datasets.mine: the train inputs hold 2 NaN and 1 infinite value (as float32; first "
        "at sample 4, position (1,))"
    )
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n1,2,x\n3,,y\n5,6,x\n7,8,y\n")
    assert refused({"format": "csv", "train": str(path)}, tmp_path) == (
        "own_datasets.mine.train: {} holds 1 empty, NaN or infinite value (first: column 'b', "
        "line 3)".format(path)
    )


def test_a_csv_with_text_among_its_features_is_refused_where_it_is(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b,label\n1,2,x\n3,red,y\n5,6,x\n7,8,y\n")
    assert refused({"format": "csv", "train": str(path)}, tmp_path) == (
        "own_datasets.mine.train: {} has text in the feature column 'b' (line 3: 'red'): "
        "features are numbers; the only other column is the label "
        "(own_datasets.mine.label)".format(path)
    )


def test_an_image_that_does_not_decode_is_named(examples, tmp_path):
    folder, entries = examples
    import shutil

    shutil.copytree(str(folder / "shapes"), str(tmp_path / "shapes"))
    broken = tmp_path / "shapes" / "train" / "square" / "0003.png"
    broken.write_bytes(broken.read_bytes()[:60])  # cut off in its first chunk
    entry = dict(
        entries["shapes"],
        train=str(tmp_path / "shapes" / "train"),
        test=str(tmp_path / "shapes" / "test"),
    )
    message = refused(entry, tmp_path)
    assert message.startswith(
        "own_datasets.mine.train: the image {} does not decode: ".format(broken)
    )
