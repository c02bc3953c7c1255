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

from dlbench import catalog, data


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
    data.fetch(catalog.source_of("mnist", "mnist.npz", url), sha256(good), destination)
    assert destination.read_bytes() == good.read_bytes()


def test_corrupted_file_is_refused_and_leaves_nothing(served, tmp_path):
    root, url = served
    good = fake_mnist_npz(root / "mnist.npz")
    expected = sha256(good)
    corrupted = bytearray(good.read_bytes())
    corrupted[len(corrupted) // 2] ^= 0xFF
    (root / "mnist.npz").write_bytes(bytes(corrupted))
    destination = tmp_path / "resources" / "mnist.npz"
    with pytest.raises(data.ChecksumError, match="mnist.npz"):
        data.fetch(url + "mnist.npz", expected, destination)
    assert list(destination.parent.iterdir()) == []  # no file that looks complete


def test_missing_file_is_a_clear_error(served, tmp_path):
    _, url = served
    destination = tmp_path / "resources" / "mnist.npz"
    with pytest.raises(FileNotFoundError, match="404"):
        data.fetch(url + "mnist.npz", "sha256:" + "0" * 64, destination)
    assert not destination.exists()


def test_local_folder_mirror(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    expected = sha256(fake_mnist_npz(mirror / "mnist.npz"))
    source = catalog.source_of("mnist", "mnist.npz", str(mirror))
    assert source == str(mirror / "mnist.npz")
    destination = tmp_path / "out" / "mnist.npz"
    data.fetch(source, expected, destination)
    assert sha256(destination) == expected
    (mirror / "mnist.npz").write_bytes(b"not the file")
    with pytest.raises(data.ChecksumError):
        data.fetch(source, expected, tmp_path / "other" / "mnist.npz")
    assert list((tmp_path / "other").iterdir()) == []
    with pytest.raises(FileNotFoundError, match="mirror has no file"):
        data.fetch(str(mirror / "absent.npz"), expected, tmp_path / "x")


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
    shapes = data.prepare("mnist", {"mnist.npz": raw}, out)
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
        data.read_idx(files["t10k-labels-idx1-ubyte.gz"]), arrays["t10k-labels-idx1-ubyte.gz"]
    )
    data.prepare("fashion_mnist", files, tmp_path / "fashion.npz")
    with np.load(tmp_path / "fashion.npz") as prepared:
        assert prepared["x_train"].shape == (30, 28, 28, 1)
        np.testing.assert_array_equal(prepared["y_test"], arrays["t10k-labels-idx1-ubyte.gz"])


def test_prepare_digits_is_fixed_and_centred(digits_npz, tmp_path):
    again = tmp_path / "digits.npz"
    data.prepare("digits", {}, again)
    with np.load(digits_npz) as first, np.load(again) as second:
        for name in ("x_train", "y_train", "x_test", "y_test"):
            np.testing.assert_array_equal(first[name], second[name])
        assert first["x_train"].shape == (1438, 28, 28, 1) and len(first["x_test"]) == 359
        assert first["x_train"][:, :2].max() == 0 and first["x_train"][:, :, -2:].max() == 0
        assert first["x_train"].max() == 1.0


def write_cifar_archive(path, per_batch=4, seed=2):
    """A tiny tar.gz in the layout of CIFAR-10's binary version."""
    import io
    import tarfile

    rng = np.random.RandomState(seed)
    expected = {"train": [], "test": []}
    with tarfile.open(path, "w:gz") as tar:
        for split, members in data.CIFAR_MEMBERS.items():
            for name in members:
                labels = rng.randint(0, 10, per_batch).astype("uint8")
                planes = rng.randint(0, 256, (per_batch, 3, 32, 32)).astype("uint8")
                raw = b"".join(
                    bytes([label]) + image.tobytes() for label, image in zip(labels, planes)
                )
                info = tarfile.TarInfo(name)
                info.size = len(raw)
                tar.addfile(info, io.BytesIO(raw))
                expected[split].append((labels, planes))
    return expected


def test_prepare_cifar10_from_the_binary_archive(tmp_path):
    archive = tmp_path / "cifar-10-binary.tar.gz"
    expected = write_cifar_archive(archive)
    data.prepare("cifar10", {"cifar-10-binary.tar.gz": archive}, tmp_path / "cifar10.npz")
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
    data.prepare("imagenet_synthetic", {}, tmp_path / "a.npz")
    with np.load(tmp_path / "a.npz") as prepared:
        assert prepared["x_test"].shape[1:] == (224, 224, 3)
        assert json.loads(str(prepared["meta"]))["classes"] == 1000
        first = prepared["x_test"][0, 0, :4, 0].copy()
    assert np.array_equal(first, data.load_imagenet_synthetic({})["x_test"][0, 0, :4, 0])


def ragged(sequences):
    array = np.empty(len(sequences), dtype=object)
    array[:] = [list(sequence) for sequence in sequences]
    return array


def write_imdb_npz(path):
    """A tiny npz in the layout of Keras' imdb.npz: ragged object arrays."""
    x_train = ragged([[5, 29997, 7], list(range(1, 200)), [4]])
    x_test = ragged([[10, 20], [30000, 1]])
    np.savez(
        path,
        x_train=x_train,
        y_train=np.array([0, 1, 1]),
        x_test=x_test,
        y_test=np.array([1, 0]),
    )


def test_read_npz_ragged_reads_object_arrays(tmp_path):
    write_imdb_npz(tmp_path / "imdb.npz")
    arrays = data.read_npz_ragged(tmp_path / "imdb.npz")
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
        data.read_npz_ragged(tmp_path / "evil.npz")


def test_encode_sequences_follows_keras_conventions():
    encoded = data.encode_sequences([[5, 29997, 7], list(range(1, 200))], 30000, 150)
    assert encoded.shape == (2, 150) and encoded.dtype == np.int32
    # start mark 1, ranks shifted by 3, rank 29997+3 is out of a 30,000 vocabulary -> 2
    assert list(encoded[0, -4:]) == [1, 8, 2, 10] and not encoded[0, :-4].any()
    # longer than 150: the front is cut, the last 150 ids stay
    assert list(encoded[1, -3:]) == [200, 201, 202] and encoded[1, 0] == 53


def test_prepare_imdb(tmp_path):
    write_imdb_npz(tmp_path / "imdb.npz")
    data.prepare("imdb", {"imdb.npz": tmp_path / "imdb.npz"}, tmp_path / "prepared.npz")
    with np.load(tmp_path / "prepared.npz") as prepared:
        assert prepared["x_train"].shape == (3, 150) and prepared["x_test"].shape == (2, 150)
        assert list(prepared["y_train"]) == [0, 1, 1]
        assert json.loads(str(prepared["meta"])) == {"classes": 2, "vocabulary": 30000}
