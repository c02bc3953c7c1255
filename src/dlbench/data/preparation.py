"""Preparing a dataset: its raw files (or generated data) into one
normalised .npz of model inputs and labels, with a fixed split and order,
read by every backend alike (runs in the workflow's main environment)."""

import json
import os
from pathlib import Path

import numpy as np

from dlbench.catalog import DATASETS, INPUT_SEPARATOR, INPUT_SHAPES, input_shape
from dlbench.data.raw_formats import read_babi, read_cifar_binary, read_idx, read_npz_ragged

DIGITS_SPLIT_SEED = 0
DIGITS_TEST_FRACTION = 0.2


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
