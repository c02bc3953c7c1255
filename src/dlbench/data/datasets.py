"""Download and prepare datasets (runs in the workflow's main environment).

Downloads go through pooch: retries, a progress bar, and the checksum checked
on a temporary file before it is moved into place, so a corrupted download
never leaves a file that looks complete and nothing reads unverified bytes.
``prepare`` writes one normalised array file per dataset with a fixed split
and order, read by every backend alike.
"""

import gzip
import json
import os
import pickle
import re
import shutil
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pooch

from dlbench.catalog import (
    DATASETS,
    INPUT_SEPARATOR,
    INPUT_SHAPES,
    NO_DATA_REASON,
    UNAVAILABLE_DATA,
    input_shape,
)

DOWNLOAD_RETRIES = 3
DIGITS_SPLIT_SEED = 0
DIGITS_TEST_FRACTION = 0.2


class ChecksumError(RuntimeError):
    pass


def _check(path, known_hash, origin):
    if not pooch.hashes.hash_matches(str(path), known_hash):
        raise ChecksumError(
            "{} does not match its checksum {} (got {}): the download is corrupt "
            "or the mirror holds another file".format(
                origin,
                known_hash,
                pooch.file_hash(str(path), alg=pooch.hashes.hash_algorithm(known_hash)),
            )
        )


def fetch(source, known_hash, destination, hash_record=None):
    """Fetch ``source`` (URL or local path) to ``destination``, verified.

    Raises ``ChecksumError`` for a file that fails its checksum and
    ``FileNotFoundError`` for one that is not there; in both cases nothing
    is left at ``destination``. A file without a published checksum
    (``known_hash`` None) is checked against ``hash_record``, the SHA-256
    written there on its first download (trust on first use).
    """
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    record = Path(hash_record) if hash_record else None
    if known_hash is None and record is not None and record.is_file():
        known_hash = record.read_text().strip()
        print("no published checksum; checking against the one recorded in {}".format(record))
    if urlparse(source).scheme:
        _download(source, known_hash, destination)
    else:
        _copy(source, known_hash, destination)
    if known_hash is None:
        digest = "sha256:" + pooch.file_hash(str(destination), alg="sha256")
        if record is not None:
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(digest + "\n")
        print(
            "no published checksum for {}: recorded {} on this first download in {}; later "
            "downloads must match it".format(source, digest, record)
        )
    return destination


# What a raw file holds in place of its data when it could not be fetched,
# then the reason: the dataset's cells become unavailable, the rest of the
# workflow goes on, and retry_downloads tries the download again.
UNFETCHED = b"dlbench: this file could not be fetched\n"


def fetch_or_say_why(source, known_hash, destination, hash_record=None):
    """``fetch``; where the file cannot be had (no network, no such file,
    a checksum that does not match) the reason written at ``destination``
    instead (``unfetched_reason`` reads it), and returned."""
    try:
        fetch(source, known_hash, destination, hash_record=hash_record)
        return None
    except (OSError, ValueError, ChecksumError) as error:  # requests' errors are OSErrors
        reason = "{}: {}: {}".format(source, type(error).__name__, error)
    Path(destination).write_bytes(UNFETCHED + reason.encode())
    print("could not fetch {}".format(reason))
    return reason


def unfetched_reason(path):
    """Why the raw file at ``path`` could not be fetched, or None for data."""
    with open(str(path), "rb") as handle:
        head = handle.read(len(UNFETCHED))
        if head != UNFETCHED:
            return None
        return handle.read().decode(errors="replace")


def holds_no_data(path):
    """Whether ``path`` is a raw file that could not be fetched or a
    prepared file made from one (the reason in place of the data)."""
    if unfetched_reason(path) is not None:
        return True
    if not str(path).endswith(".npz"):
        return False
    try:
        with zipfile.ZipFile(str(path)) as archive:
            return UNAVAILABLE_DATA + ".npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False  # not this module's to judge: the seals catch a damaged file


def records_without_data(folders, dataset):
    """The run records under ``folders`` (this machine's runs and checks)
    that say ``dataset``'s data could not be had: each one discarded makes
    Snakemake ask for the dataset again, and every job made from its reason
    (weights, checks, counts, the other runs) is made again after it.
    A file that cannot be read, or is not a record, is kept and named on
    stderr with the error: whether it carries the reason is not known."""
    found = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.json")):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError) as error:
                _unread(path, dataset, "{}: {}".format(type(error).__name__, error))
                continue
            if not isinstance(record, dict):
                _unread(path, dataset, "a JSON {}, not a record".format(type(record).__name__))
                continue
            if record.get("status") == "unavailable" and str(record.get("reason")).startswith(
                NO_DATA_REASON.format(dataset)
            ):
                found.append(str(path))
    return found


def _unread(path, dataset, error):
    print(
        "not read, kept: {} ({}); if it says {}'s data could not be had, delete it for the "
        "download to be tried again".format(path, error, dataset),
        file=sys.stderr,
    )


def discard_unfetched(files, record_folders=lambda dataset: []):
    """Delete each of ``files`` ({path: dataset}) that holds the reason a
    download failed instead of data (a raw file, or the prepared file made
    from it), its seal, and the records in ``record_folders(dataset)`` that
    carry the reason, so that the workflow tries the download again: outputs
    left in place would keep Snakemake from asking for the data. Returns the
    files discarded."""
    discarded = []
    for path, dataset in files.items():
        if not (os.path.isfile(str(path)) and holds_no_data(path)):
            continue
        discarded.append(str(path))
        for made in [str(path), str(path) + ".sha256"] + records_without_data(
            record_folders(dataset), dataset
        ):
            if os.path.exists(made):
                os.remove(made)
    return discarded


def _copy(source, known_hash, destination):
    if not Path(source).is_file():
        raise FileNotFoundError("data mirror has no file {}".format(source))
    fd, tmp = tempfile.mkstemp(dir=str(destination.parent), prefix=destination.name + ".")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        if known_hash is not None:
            _check(tmp, known_hash, source)
        os.replace(tmp, str(destination))
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _download(url, known_hash, destination):
    name = destination.name
    registry = pooch.create(
        path=str(destination.parent),
        base_url="",
        registry={name: known_hash},
        urls={name: url},
        retry_if_failed=DOWNLOAD_RETRIES,
    )
    try:
        registry.fetch(name, progressbar=True)
    except ValueError as error:  # pooch's checksum mismatch
        raise ChecksumError("{}: {}".format(url, error)) from error
    except Exception as error:
        response = getattr(error, "response", None)
        if getattr(response, "status_code", None) == 404:
            raise FileNotFoundError("{}: not found (HTTP 404)".format(url)) from error
        raise


def read_idx(path):
    """An IDX file (MNIST's original format), gzipped or not."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(str(path), "rb") as handle:
        raw = handle.read()
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


CIFAR_MEMBERS = {
    "train": ["cifar-10-batches-bin/data_batch_{}.bin".format(i) for i in range(1, 6)],
    "test": ["cifar-10-batches-bin/test_batch.bin"],
}
CIFAR_RECORD = 1 + 32 * 32 * 3


def read_cifar_binary(archive):
    """CIFAR-10's binary version: records of one label byte and 3072 pixel
    bytes (red, green, blue planes of 32x32). Members are read by their exact
    names from the verified archive; nothing is extracted or unpickled."""
    arrays = {}
    with tarfile.open(str(archive), "r:gz") as tar:
        for split, members in CIFAR_MEMBERS.items():
            raw = b"".join(tar.extractfile(tar.getmember(name)).read() for name in members)
            records = np.frombuffer(raw, dtype=np.uint8).reshape(-1, CIFAR_RECORD)
            images = records[:, 1:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
            arrays["x_" + split] = images.astype("float32") / 255.0
            arrays["y_" + split] = records[:, 0].astype("int64")
    return arrays


# The only globals a pickled numpy array needs. Anything else in a data file
# (a function to call, say) is refused, even after its checksum matched.
NUMPY_PICKLE_GLOBALS = frozenset(
    {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
    }
)


class NumpyOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in NUMPY_PICKLE_GLOBALS:
            raise pickle.UnpicklingError(
                "refusing to load {}.{} from a data file: only numpy arrays are allowed".format(
                    module, name
                )
            )
        return super().find_class(module, name)


def read_npy_header(handle):
    """(shape, fortran_order, dtype) of an .npy stream, which is left at
    the start of the data."""
    version = np.lib.format.read_magic(handle)
    read = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
    }[version]
    return read(handle)


def read_npz_ragged(path):
    """The arrays of an .npz whose members may be object arrays (ragged
    sequences, as in Keras' imdb.npz), unpickled with numpy's globals only."""
    arrays = {}
    with zipfile.ZipFile(str(path)) as archive:
        for member in archive.namelist():
            with archive.open(member) as handle:
                shape, fortran_order, dtype = read_npy_header(handle)
                if dtype.hasobject:
                    array = NumpyOnlyUnpickler(handle).load()
                else:
                    array = np.frombuffer(handle.read(), dtype=dtype).reshape(
                        shape, order="F" if fortran_order else "C"
                    )
            arrays[member[: -len(".npy")]] = array
    return arrays


def encode_sequences(sequences, vocabulary, length, start=1, oov=2, index_from=3):
    """Keras' imdb conventions (0 padding, 1 start, 2 out-of-vocabulary, word
    ranks shifted by 3), words ranked beyond ``vocabulary`` replaced by the
    out-of-vocabulary mark, then padded and truncated at the front to
    ``length`` as Keras' pad_sequences does by default."""
    encoded = np.zeros((len(sequences), length), dtype="int32")
    for row, words in enumerate(sequences):
        ids = [start] + [int(word) + index_from for word in words]
        ids = [word if word < vocabulary else oov for word in ids][-length:]
        encoded[row, length - len(ids) :] = ids
    return encoded


BABI_MEMBERS = {
    split: "tasks_1-20_v1-2/en/qa2_two-supporting-facts_{}.txt".format(split)
    for split in ("train", "test")
}


def tokenize(sentence):
    """Words and punctuation marks. The Keras example's pattern ``(\\W+)?``
    meant this; since Python 3.7 it splits into single characters."""
    return [token.strip() for token in re.split(r"(\W+)", sentence) if token.strip()]


def parse_stories(lines):
    """bAbI's format: numbered lines, 1 starting a new story; a question line
    is ``question\\tanswer\\tsupporting fact ids``. Each question comes with
    every fact of its story so far (not only the supporting ones), flattened
    to one token list, as the Keras example feeds its RNN."""
    questions, story = [], []
    for line in lines:
        number, text = line.strip().split(" ", 1)
        if int(number) == 1:
            story = []
        if "\t" in text:
            question, answer, _ = text.split("\t")
            facts = [token for sentence in story for token in sentence]
            questions.append((facts, tokenize(question), answer))
        else:
            story.append(tokenize(text))
    return questions


def read_babi(archive):
    """The train and test questions of task QA2 (1k) from the bAbI archive,
    read by their member names without extracting anything."""
    with tarfile.open(str(archive), "r:gz") as tar:
        return {
            split: parse_stories(
                tar.extractfile(tar.getmember(name)).read().decode("utf-8").splitlines()
            )
            for split, name in BABI_MEMBERS.items()
        }


def vectorize_stories(splits):
    """Word ids (1-based over the sorted vocabulary of both splits, 0 for
    padding), stories and questions pre-padded to the longest of each, the
    answer's word id as label, as the Keras example does."""
    every = [item for questions in splits.values() for item in questions]
    vocabulary = sorted({w for story, q, answer in every for w in story + q + [answer]})
    index = {word: i + 1 for i, word in enumerate(vocabulary)}
    lengths = {
        "story": max(len(story) for story, _, _ in every),
        "question": max(len(question) for _, question, _ in every),
    }
    prepared = {
        "meta": {
            "classes": len(vocabulary) + 1,
            "vocabulary": len(vocabulary) + 1,
            "story_length": lengths["story"],
            "query_length": lengths["question"],
        }
    }
    for split, questions in splits.items():
        for part, column in (("story", 0), ("question", 1)):
            words = [[index[w] for w in item[column]] for item in questions]
            padded = np.zeros((len(words), lengths[part]), dtype="int32")
            for row, ids in enumerate(words):
                padded[row, lengths[part] - len(ids) :] = ids
            prepared["x_{}__{}".format(split, part)] = padded
        prepared["y_" + split] = np.array([index[a] for _, _, a in questions], dtype="int64")
    return prepared


def _images(pixels, scale):
    return (pixels.astype("float32") / scale)[..., np.newaxis]


def load_mnist(files, entry):
    with np.load(str(files["mnist.npz"]), allow_pickle=False) as arrays:
        return {
            "x_train": _images(arrays["x_train"], 255.0),
            "y_train": arrays["y_train"].astype("int64"),
            "x_test": _images(arrays["x_test"], 255.0),
            "y_test": arrays["y_test"].astype("int64"),
        }


def load_fashion_mnist(files, entry):
    return {
        "x_train": _images(read_idx(files["train-images-idx3-ubyte.gz"]), 255.0),
        "y_train": read_idx(files["train-labels-idx1-ubyte.gz"]).astype("int64"),
        "x_test": _images(read_idx(files["t10k-images-idx3-ubyte.gz"]), 255.0),
        "y_test": read_idx(files["t10k-labels-idx1-ubyte.gz"]).astype("int64"),
    }


def load_digits(files, entry):
    """scikit-learn's 8x8 digits, each pixel repeated 3x3 to 24x24 and
    centred in 28x28 as MNIST centres its 20x20 digits; a fixed split."""
    from sklearn.datasets import load_digits as sklearn_digits

    bunch = sklearn_digits()
    images = np.kron(bunch.images, np.ones((3, 3)))
    images = np.pad(images, ((0, 0), (2, 2), (2, 2)), mode="constant")
    order = np.random.RandomState(DIGITS_SPLIT_SEED).permutation(len(images))
    n_test = int(round(len(images) * DIGITS_TEST_FRACTION))
    test, train = order[:n_test], order[n_test:]
    x = _images(images, 16.0)
    y = bunch.target.astype("int64")
    return {"x_train": x[train], "y_train": y[train], "x_test": x[test], "y_test": y[test]}


def load_cifar10(files, entry):
    return read_cifar_binary(files["cifar-10-binary.tar.gz"])


def load_imagenet_synthetic(files, entry, seed=0):
    """Random images of ImageNet's shape, for speed measurements only."""
    rng = np.random.RandomState(seed)
    half = entry["samples"] // 2
    shape = (half,) + INPUT_SHAPES[entry["input"]]
    return {
        "x_train": rng.random_sample(shape).astype("float32"),
        "y_train": rng.randint(0, entry["classes"], half).astype("int64"),
        "x_test": rng.random_sample(shape).astype("float32"),
        "y_test": rng.randint(0, entry["classes"], half).astype("int64"),
        "meta": {"classes": entry["classes"]},
    }


def load_synthetic(files, entry, seed=0):
    """Random inputs of the config's shape (synthetic_datasets) and random
    labels, for speed-only runs: floats in [0, 1), or word ids in
    [1, vocabulary) as int32 where the dataset has a vocabulary."""
    spec = entry["synthetic"]
    rng = np.random.RandomState(seed)
    prepared = {"meta": {"classes": spec["classes"]}}
    if spec.get("vocabulary"):
        prepared["meta"]["vocabulary"] = spec["vocabulary"]
    for split, default in (("train", 512), ("test", 128)):
        shape = (spec.get(split, default),) + tuple(spec["input_shape"])
        if spec.get("vocabulary"):
            inputs = rng.randint(1, spec["vocabulary"], shape).astype("int32")
        else:
            inputs = rng.random_sample(shape).astype("float32")
        prepared["x_" + split] = inputs
        prepared["y_" + split] = rng.randint(0, spec["classes"], shape[0]).astype("int64")
    return prepared


def load_imdb(files, entry):
    arrays = read_npz_ragged(files["imdb.npz"])
    prepared = {"meta": {"classes": 2, "vocabulary": entry["vocabulary"]}}
    for split in ("train", "test"):
        prepared["x_" + split] = encode_sequences(
            arrays["x_" + split], entry["vocabulary"], entry["length"]
        )
        prepared["y_" + split] = arrays["y_" + split].astype("int64")
    return prepared


def load_babi(files, entry):
    return vectorize_stories(read_babi(files["babi_tasks_1-20_v1-2.tar.gz"]))


# By file format: a generated stand-in is read by the loader of the dataset
# it is ``like``.
LOADERS = {
    "imdb": load_imdb,
    "mnist": load_mnist,
    "fashion_mnist": load_fashion_mnist,
    "digits": load_digits,
    "cifar10": load_cifar10,
    "imagenet_synthetic": load_imagenet_synthetic,
    "babi": load_babi,
    "synthetic": load_synthetic,
}


def model_inputs(arrays, split):
    """A split's model input: one array, or a dict of named arrays for a
    model with several inputs (stored as ``x_<split>__<name>``)."""
    if "x_" + split in arrays:
        return arrays["x_" + split]
    prefix = "x_{}{}".format(split, INPUT_SEPARATOR)
    return {key[len(prefix) :]: arrays[key] for key in arrays if key.startswith(prefix)}


def _matches(shape, expected):
    return len(shape) == len(expected) and all(e in (None, s) for s, e in zip(shape, expected))


def check_inputs(dataset, arrays, expected):
    for split in ("train", "test"):
        x, y = model_inputs(arrays, split), arrays["y_" + split]
        found = {name: a.shape for name, a in x.items()} if isinstance(x, dict) else x.shape
        if isinstance(expected, dict):
            ok = sorted(found) == sorted(expected) and all(
                _matches(found[name], (len(y),) + expected[name]) for name in expected
            )
        else:
            ok = _matches(found, (len(y),) + expected)
        if not ok:
            raise ValueError(
                "{} {}: inputs {} and labels {} do not match the expected shape {}".format(
                    dataset, split, found, y.shape, expected
                )
            )


def prepare(dataset, files, output, entry=None):
    """Write ``output`` (.npz): the model inputs ``x_train``/``x_test`` (images
    as float32 in [0, 1], shaped (N, H, W, C); word ids as int32, shaped
    (N, length); several named inputs as ``x_train__<name>``), int64 labels,
    and ``meta``, a JSON string with what a model needs to know (classes,
    vocabulary, ...). The split and order are fixed, the same for every
    backend. ``files`` maps raw file names to their verified local paths;
    ``entry`` is the dataset's (a registry's, for a config's own dataset;
    the catalog's by default)."""
    entry = entry or DATASETS[dataset]
    loader = LOADERS[entry.get("like", dataset)]
    arrays = loader({name: Path(path) for name, path in files.items()}, entry)
    meta = arrays.pop("meta", None) or {"classes": 10}
    check_inputs(dataset, arrays, input_shape(entry))
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp.npz")
    np.savez(str(tmp), meta=np.array(json.dumps(meta)), **arrays)
    os.replace(str(tmp), str(output))
    return {name: value.shape for name, value in arrays.items()}
