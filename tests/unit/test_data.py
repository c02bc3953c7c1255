"""Downloads against a real HTTP server on 127.0.0.1, mirrors, and preparation."""

import functools
import gzip
import hashlib
import http.server
import json
import os
import pickle
import threading

import numpy as np
import pytest

from dlbench import catalog
from dlbench.data import downloads, preparation, raw_formats, stand_ins, unfetched
from dlbench.registry import BUILT_IN
from dlbench.run import run_data

# Three of its tests wait out pooch's back-off between retries (6 s each): run
# beside the tests' workflow, not after it with the other unit tests
pytestmark = pytest.mark.early


@pytest.fixture
def served(tmp_path):
    """A loopback HTTP server over a folder of fixture files."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, "http://127.0.0.1:{}/".format(server.server_address[1])
    server.shutdown()
    server.server_close()


def fake_mnist_npz(path, n_train=50, n_test=20, seed=0):
    rng = np.random.RandomState(seed)
    np.savez(
        path,
        x_train=rng.randint(0, 256, (n_train, 28, 28)).astype("uint8"),
        y_train=rng.randint(0, 10, n_train).astype("uint8"),
        x_test=rng.randint(0, 256, (n_test, 28, 28)).astype("uint8"),
        y_test=rng.randint(0, 10, n_test).astype("uint8"),
    )
    return path


def sha256(path):
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_good_file_is_downloaded_and_verified(served, tmp_path):
    root, url = served
    good = fake_mnist_npz(root / "mnist.npz")
    destination = tmp_path / "resources" / "mnist" / "mnist.npz"
    downloads.fetch(catalog.source_of("mnist", "mnist.npz", url), sha256(good), destination)
    assert destination.read_bytes() == good.read_bytes()


def test_corrupted_file_is_refused_and_leaves_nothing(served, tmp_path):
    root, url = served
    good = fake_mnist_npz(root / "mnist.npz")
    expected = sha256(good)
    corrupted = bytearray(good.read_bytes())
    corrupted[len(corrupted) // 2] ^= 0xFF
    (root / "mnist.npz").write_bytes(bytes(corrupted))
    destination = tmp_path / "resources" / "mnist.npz"
    with pytest.raises(downloads.ChecksumError, match="mnist.npz"):
        downloads.fetch(url + "mnist.npz", expected, destination)
    assert list(destination.parent.iterdir()) == []  # no file that looks complete


def test_missing_file_is_a_clear_error(served, tmp_path):
    _, url = served
    destination = tmp_path / "resources" / "mnist.npz"
    with pytest.raises(FileNotFoundError, match="404"):
        downloads.fetch(url + "mnist.npz", "sha256:" + "0" * 64, destination)
    assert not destination.exists()


def test_local_folder_mirror(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    expected = sha256(fake_mnist_npz(mirror / "mnist.npz"))
    source = catalog.source_of("mnist", "mnist.npz", str(mirror))
    assert source == str(mirror / "mnist.npz")
    destination = tmp_path / "out" / "mnist.npz"
    downloads.fetch(source, expected, destination)
    assert sha256(destination) == expected
    (mirror / "mnist.npz").write_bytes(b"not the file")
    with pytest.raises(downloads.ChecksumError):
        downloads.fetch(source, expected, tmp_path / "other" / "mnist.npz")
    assert list((tmp_path / "other").iterdir()) == []
    with pytest.raises(FileNotFoundError, match="mirror has no file"):
        downloads.fetch(str(mirror / "absent.npz"), expected, tmp_path / "x")


def test_canonical_sources():
    assert catalog.source_of("mnist", "mnist.npz").startswith("https://storage.googleapis.com/")
    for dataset in ("mnist", "fashion_mnist"):
        for filename, known in catalog.DATASETS[dataset]["files"].items():
            assert known.split(":")[0] in ("sha256", "md5") and filename in catalog.source_of(
                dataset, filename
            )


def test_prepare_mnist(tmp_path):
    raw = fake_mnist_npz(tmp_path / "mnist.npz")
    out = tmp_path / "mnist_prepared.npz"
    shapes = preparation.prepare("mnist", {"mnist.npz": raw}, out)
    assert shapes["x_train"] == (50, 28, 28, 1) and shapes["y_test"] == (20,)
    with np.load(out) as arrays, np.load(raw) as original:
        assert arrays["x_train"].dtype == np.float32
        assert 0.0 <= arrays["x_train"].min() and arrays["x_train"].max() <= 1.0
        np.testing.assert_array_equal(arrays["y_train"], original["y_train"])  # order kept
        np.testing.assert_allclose(arrays["x_test"][..., 0] * 255, original["x_test"], atol=1e-3)


def write_idx(path, array):
    header = bytes([0, 0, 8, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    with gzip.open(path, "wb") as handle:
        handle.write(header + array.astype("uint8").tobytes())


def test_prepare_fashion_mnist_from_idx_files(tmp_path):
    rng = np.random.RandomState(1)
    arrays = {
        "train-images-idx3-ubyte.gz": rng.randint(0, 256, (30, 28, 28)),
        "train-labels-idx1-ubyte.gz": rng.randint(0, 10, 30),
        "t10k-images-idx3-ubyte.gz": rng.randint(0, 256, (12, 28, 28)),
        "t10k-labels-idx1-ubyte.gz": rng.randint(0, 10, 12),
    }
    files = {}
    for name, array in arrays.items():
        write_idx(tmp_path / name, array)
        files[name] = tmp_path / name
    assert set(files) == set(catalog.DATASETS["fashion_mnist"]["files"])
    np.testing.assert_array_equal(
        raw_formats.read_idx(files["t10k-labels-idx1-ubyte.gz"]),
        arrays["t10k-labels-idx1-ubyte.gz"],
    )
    preparation.prepare("fashion_mnist", files, tmp_path / "fashion.npz")
    with np.load(tmp_path / "fashion.npz") as prepared:
        assert prepared["x_train"].shape == (30, 28, 28, 1)
        np.testing.assert_array_equal(prepared["y_test"], arrays["t10k-labels-idx1-ubyte.gz"])


def test_prepare_digits_is_fixed_and_centred(digits_npz, tmp_path):
    again = tmp_path / "digits.npz"
    preparation.prepare("digits", {}, again)
    with np.load(digits_npz) as first, np.load(again) as second:
        for name in ("x_train", "y_train", "x_test", "y_test"):
            np.testing.assert_array_equal(first[name], second[name])
        assert first["x_train"].shape == (1438, 28, 28, 1) and len(first["x_test"]) == 359
        assert first["x_train"][:, :2].max() == 0 and first["x_train"][:, :, -2:].max() == 0
        assert first["x_train"].max() == 1.0


def test_prepare_cifar10_from_the_binary_archive(tmp_path):
    archive = tmp_path / "cifar-10-binary.tar.gz"
    expected = stand_ins.cifar_binary_archive(archive, per_batch=4, test=4, seed=2)
    preparation.prepare("cifar10", {"cifar-10-binary.tar.gz": archive}, tmp_path / "cifar10.npz")
    with np.load(tmp_path / "cifar10.npz") as prepared:
        assert prepared["x_train"].shape == (20, 32, 32, 3)
        assert prepared["x_test"].shape == (4, 32, 32, 3)
        labels, planes = expected["train"][1]
        np.testing.assert_array_equal(prepared["y_train"][4:8], labels)
        # channel planes become the last axis: pixel (row 3, column 5) of image 4
        np.testing.assert_allclose(
            prepared["x_train"][4, 3, 5] * 255, planes[0, :, 3, 5], atol=1e-3
        )
        assert json.loads(str(prepared["meta"])) == {"classes": 10}


def test_imagenet_synthetic_is_fixed_random_images(tmp_path):
    preparation.prepare("imagenet_synthetic", {}, tmp_path / "a.npz")
    with np.load(tmp_path / "a.npz") as prepared:
        assert prepared["x_test"].shape[1:] == (224, 224, 3)
        assert json.loads(str(prepared["meta"]))["classes"] == 1000
        first = prepared["x_test"][0, 0, :4, 0].copy()
    assert np.array_equal(
        first,
        preparation.load_imagenet_synthetic({}, catalog.DATASETS["imagenet_synthetic"])["x_test"][
            0, 0, :4, 0
        ],
    )


def write_imdb_npz(path):
    """A tiny npz in the layout of Keras' imdb.npz: ragged object arrays."""
    x_train = stand_ins.ragged([[5, 29997, 7], list(range(1, 200)), [4]])
    x_test = stand_ins.ragged([[10, 20], [30000, 1]])
    np.savez(
        path,
        x_train=x_train,
        y_train=np.array([0, 1, 1]),
        x_test=x_test,
        y_test=np.array([1, 0]),
    )


def test_read_npz_ragged_reads_object_arrays(tmp_path):
    write_imdb_npz(tmp_path / "imdb.npz")
    arrays = raw_formats.read_npz_ragged(tmp_path / "imdb.npz")
    assert list(arrays["x_train"][0]) == [5, 29997, 7] and len(arrays["x_train"][1]) == 199
    assert list(arrays["y_test"]) == [1, 0]


class Exploit:
    def __reduce__(self):
        return (os.system, ("echo owned",))


def test_read_npz_ragged_refuses_anything_but_numpy(tmp_path):
    payload = np.empty(1, dtype=object)
    payload[0] = Exploit()
    np.savez(tmp_path / "evil.npz", x_train=payload)
    with pytest.raises(pickle.UnpicklingError, match="refusing to load"):
        raw_formats.read_npz_ragged(tmp_path / "evil.npz")


def test_encode_sequences_follows_keras_conventions():
    encoded = preparation.encode_sequences([[5, 29997, 7], list(range(1, 200))], 30000, 150)
    assert encoded.shape == (2, 150) and encoded.dtype == np.int32
    # start mark 1, ranks shifted by 3, rank 29997+3 is out of a 30,000 vocabulary -> 2
    assert list(encoded[0, -4:]) == [1, 8, 2, 10] and not encoded[0, :-4].any()
    # longer than 150: the front is cut, the last 150 ids stay
    assert list(encoded[1, -3:]) == [200, 201, 202] and encoded[1, 0] == 53


def test_prepare_imdb(tmp_path):
    write_imdb_npz(tmp_path / "imdb.npz")
    preparation.prepare("imdb", {"imdb.npz": tmp_path / "imdb.npz"}, tmp_path / "prepared.npz")
    with np.load(tmp_path / "prepared.npz") as prepared:
        assert prepared["x_train"].shape == (3, 150) and prepared["x_test"].shape == (2, 150)
        assert list(prepared["y_train"]) == [0, 1, 1]
        assert json.loads(str(prepared["meta"])) == {"classes": 2, "vocabulary": 30000}


def test_file_without_published_hash_is_recorded_then_checked(served, tmp_path):
    root, url = served
    stand_ins.babi_archive(root / "babi.tar.gz", train=10, test=10)
    record = tmp_path / "checksums" / "babi.tar.gz.sha256"
    first = tmp_path / "first" / "babi.tar.gz"
    downloads.fetch(url + "babi.tar.gz", None, first, hash_record=record)
    assert record.read_text().strip() == sha256(first)
    # the same bytes again pass; other bytes at the same place are refused
    downloads.fetch(
        url + "babi.tar.gz", None, tmp_path / "again" / "babi.tar.gz", hash_record=record
    )
    stand_ins.babi_archive(root / "babi.tar.gz", train=10, test=10, seed=1)
    with pytest.raises(downloads.ChecksumError):
        downloads.fetch(
            url + "babi.tar.gz", None, tmp_path / "third" / "babi.tar.gz", hash_record=record
        )
    assert not (tmp_path / "third" / "babi.tar.gz").exists()


BABI_STORY = """1 Mary moved to the bathroom.
2 Sandra journeyed to the bedroom.
3 Mary got the football there.
4 John went to the kitchen.
5 Where is the football? \tbathroom\t3 1
6 Mary went back to the kitchen.
7 Where is the football? \tkitchen\t3 6
1 Daniel took the apple there.
2 Where is the apple? \tgarden\t1
"""


def test_parse_stories_reads_babi_lines():
    questions = raw_formats.parse_stories(BABI_STORY.splitlines())
    assert len(questions) == 3
    story, question, answer = questions[1]
    assert question == ["Where", "is", "the", "football", "?"] and answer == "kitchen"
    # every fact so far, questions left out, punctuation kept as tokens
    assert story[:6] == ["Mary", "moved", "to", "the", "bathroom", "."]
    assert len(story) == 6 + 6 + 6 + 6 + 7 and "Where" not in story
    assert questions[2][0] == ["Daniel", "took", "the", "apple", "there", "."]  # a new story


def test_vectorize_stories_pads_in_front_and_indexes_words_from_one():
    questions = raw_formats.parse_stories(BABI_STORY.splitlines())
    prepared = preparation.vectorize_stories({"train": questions[:2], "test": questions[2:]})
    meta = prepared["meta"]
    vocabulary = sorted({w for s, q, a in questions for w in s + q + [a]})
    assert meta["vocabulary"] == meta["classes"] == len(vocabulary) + 1
    assert prepared["x_train__story"].shape == (2, 31) and prepared["x_test__question"].shape == (
        1,
        5,
    )
    first = prepared["x_train__story"][0]
    assert not first[: 31 - 24].any() and first[31 - 24] and first[-1] == vocabulary.index(".") + 1
    assert prepared["y_train"][1] == vocabulary.index("kitchen") + 1


def test_prepare_babi_from_the_archive(tmp_path):
    archive = tmp_path / "babi_tasks_1-20_v1-2.tar.gz"
    stand_ins.babi_archive(archive, train=100, test=50)
    preparation.prepare("babi", {archive.name: archive}, tmp_path / "babi.npz")
    with np.load(tmp_path / "babi.npz") as prepared:
        meta = json.loads(str(prepared["meta"]))
        assert prepared["x_train__story"].shape == (100, meta["story_length"])
        assert prepared["x_test__question"].shape == (50, meta["query_length"])
        answers = set(prepared["y_train"]) | set(prepared["y_test"])
    # every answer is a place: the generated stories are consistent QA2
    assert len(answers) <= 6 and meta["classes"] == meta["vocabulary"]


def test_generated_cifar_and_imdb_prepare_like_the_originals(tmp_path):
    stand_ins.cifar_binary_archive(tmp_path / "c.tar.gz", per_batch=10, test=10)
    preparation.prepare(
        "cifar10_tiny", {"cifar-10-binary.tar.gz": tmp_path / "c.tar.gz"}, tmp_path / "c.npz"
    )
    stand_ins.imdb_npz(tmp_path / "i.npz", train=20, test=10)
    preparation.prepare("imdb_tiny", {"imdb.npz": tmp_path / "i.npz"}, tmp_path / "p.npz")
    with np.load(tmp_path / "c.npz") as cifar, np.load(tmp_path / "p.npz") as imdb:
        assert cifar["x_train"].shape == (50, 32, 32, 3) and len(cifar["y_test"]) == 10
        assert imdb["x_train"].shape == (20, 150) and imdb["x_train"].max() < 30000
        assert set(imdb["y_train"]) <= {0, 1}


def test_generated_mnist_prepares_like_the_original_and_is_learnable(tmp_path):
    stand_ins.mnist_npz(tmp_path / "mnist.npz", train=200, test=50)
    preparation.prepare(
        "mnist_generated", {"mnist.npz": tmp_path / "mnist.npz"}, tmp_path / "m.npz"
    )
    with np.load(tmp_path / "m.npz") as mnist:
        assert mnist["x_train"].shape == (200, 28, 28, 1) and len(mnist["y_test"]) == 50
        x, y = mnist["x_train"].reshape(200, -1), mnist["y_train"]
    # each class lights its own pixels: the nearest class mean finds the label
    means = np.stack([x[y == label].mean(axis=0) for label in range(10)])
    nearest = np.argmin(((x[:, None, :] - means[None]) ** 2).sum(axis=2), axis=1)
    assert (nearest == y).mean() > 0.9


def test_generated_data_puts_each_downloaded_datasets_stand_in_in_its_place(smoke_config):
    from dlbench.plan import matrix

    config = dict(smoke_config, generated_data=True, exclude=[{"dataset": "mnist"}])
    config["workloads"] = [dict(entry, dataset="mnist") for entry in config["workloads"][:1]]
    config["equivalence_check"] = dict(config["equivalence_check"], workloads=["mnist/mlp"])
    matrix.normalise(config)
    assert config["workloads"][0]["dataset"] == "mnist_generated"
    assert config["exclude"] == [{"dataset": "mnist_generated"}]
    assert config["equivalence_check"]["workloads"] == ["mnist_generated/mlp"]
    for dataset in ("mnist", "cifar10", "imdb", "babi"):
        stand_in = catalog.DATASETS[BUILT_IN.generated_stand_in(dataset)]
        assert stand_in["like"] == dataset and BUILT_IN.generated(dataset + "_generated")
    assert BUILT_IN.generated_stand_in("digits") == "digits"


def test_prepare_refuses_inputs_of_the_wrong_shape(tmp_path):
    arrays = {
        "x_train": np.zeros((3, 28, 28)),
        "y_train": np.zeros(3),
        "x_test": np.zeros((1, 28, 28, 1)),
        "y_test": np.zeros(1),
    }
    with pytest.raises(ValueError, match="expected shape"):
        preparation.check_inputs("mnist", arrays, catalog.INPUT_SHAPES["image28"])


def test_a_file_that_cannot_be_fetched_holds_the_reason_until_tried_again(tmp_path):
    destination = tmp_path / "resources" / "mnist" / "mnist.npz"
    destination.parent.mkdir(parents=True)
    missing = tmp_path / "mirror" / "mnist.npz"
    reason = unfetched.fetch_or_say_why(str(missing), "sha256:" + "0" * 64, destination)
    assert "data mirror has no file" in reason and str(missing) in reason
    assert unfetched.unfetched_reason(destination) == reason
    prepared = tmp_path / "results" / "mnist.npz"
    prepared.parent.mkdir()
    run_data.write_unavailable(str(prepared), "could not fetch " + reason)
    records = tmp_path / "runs" / "mnist"
    (records / "mlp").mkdir(parents=True)
    reason = catalog.NO_DATA_REASON.format("mnist") + "could not fetch"
    (records / "mlp" / "run.json").write_text(
        json.dumps({"status": "unavailable", "reason": reason})
    )
    (records / "ok.json").write_text(json.dumps({"status": "ok", "reason": None}))
    made = {destination: "mnist", prepared: "mnist", tmp_path / "absent": "mnist"}
    discarded = unfetched.discard_unfetched(made, lambda dataset: [tmp_path / "runs" / dataset])
    assert discarded == [str(destination), str(prepared)]
    assert not destination.exists() and not prepared.exists()
    assert not (records / "mlp" / "run.json").exists() and (records / "ok.json").exists()


def test_a_record_that_cannot_be_read_is_named_on_stderr_never_skipped_silently(tmp_path, capsys):
    """Looking for the records that carry a failed download's reason, a
    file that does not read or parse is kept and named with its error; the
    records that do read are discarded as before."""
    records = tmp_path / "runs" / "mnist"
    records.mkdir(parents=True)
    reason = catalog.NO_DATA_REASON.format("mnist") + "could not fetch"
    carrying = records / "run.json"
    carrying.write_text(json.dumps({"status": "unavailable", "reason": reason}))
    cut = records / "cut.json"
    cut.write_text('{"status": "unavail')  # cut off as it was written
    listed = records / "listed.json"
    listed.write_text("[]")
    unreadable = records / "unreadable.json"
    unreadable.mkdir()  # reading it fails: IsADirectoryError, an OSError
    assert unfetched.records_without_data([records], "mnist") == [str(carrying)]
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 3
    cut_line, listed_line, unreadable_line = said
    assert cut_line.startswith("not read, kept: {} (JSONDecodeError: ".format(cut))
    assert "if it says mnist's data could not be had, delete it" in cut_line
    assert listed_line.startswith("not read, kept: {} (a JSON list, not a record)".format(listed))
    assert unreadable_line.startswith(
        "not read, kept: {} (IsADirectoryError: [Errno 21] Is a directory: ".format(unreadable)
    )
    made = tmp_path / "mnist.npz"
    made.write_bytes(unfetched.UNFETCHED + b"404")
    assert unfetched.discard_unfetched({made: "mnist"}, lambda dataset: [records]) == [str(made)]
    assert not carrying.exists() and cut.exists() and listed.exists()
    assert str(cut) in capsys.readouterr().err


def test_a_fetched_file_is_data_however_it_starts(tmp_path):
    path = fake_mnist_npz(tmp_path / "mnist.npz")
    assert unfetched.unfetched_reason(path) is None
    assert unfetched.discard_unfetched({path: "mnist"}) == [] and path.exists()
    preparation.prepare("mnist", {"mnist.npz": path}, tmp_path / "prepared.npz")
    assert unfetched.discard_unfetched({tmp_path / "prepared.npz": "mnist"}) == []


def test_a_dataset_without_its_data_says_why_to_every_reader(tmp_path):
    path = str(tmp_path / "mnist.npz")
    run_data.write_unavailable(path, "could not fetch mnist.npz: 404")
    assert run_data.unavailable_reason(path) == "could not fetch mnist.npz: 404"
    with pytest.raises(run_data.DataUnavailable, match="404"):
        run_data.load_dataset(path)
