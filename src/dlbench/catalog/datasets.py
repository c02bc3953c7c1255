"""The built-in datasets: where their raw files come from and how they are
checked, the model inputs they provide, and the names a prepared file and a
run's record use for data that could not be had."""

import os.path
from types import MappingProxyType
from typing import Any, Dict
from urllib.parse import urlparse

# Where a dataset's raw files come from. ``sha256`` (or ``md5:...``) is checked
# before anything reads the file. ``base_url`` is the canonical location that
# Keras' own loaders use; ``data_mirror`` in the config replaces it. ``input``
# is the kind of model input the prepared dataset provides.
KERAS_DATASETS = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
_DATASETS: Dict[str, Dict[str, Any]] = {
    "mnist": {
        "base_url": KERAS_DATASETS,
        "files": {
            "mnist.npz": "sha256:731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",
        },
        "input": "image28",
    },
    # Keras' loader uses a copy without hashes; the publisher's own location
    # comes with published MD5s, so the bytes can be checked.
    "fashion_mnist": {
        "base_url": "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
        "files": {
            "train-labels-idx1-ubyte.gz": "md5:25c81989df183df01b3e8a0aad5dffbe",
            "train-images-idx3-ubyte.gz": "md5:8d4fb7e6c68d591d4c3dfef9ec88bf0d",
            "t10k-labels-idx1-ubyte.gz": "md5:bb300cfdad3c16e7a12a480ee83cd310",
            "t10k-images-idx3-ubyte.gz": "md5:bef4ecab320f06d8554ea6380940ec79",
        },
        "input": "image28",
    },
    # The authors' binary version: fixed-length records, no pickle to load.
    "cifar10": {
        "base_url": "https://www.cs.toronto.edu/~kriz/",
        "files": {"cifar-10-binary.tar.gz": "md5:c32a1d4ab5d03f1284b67883e8d87530"},
        "input": "image32",
    },
    # Reviews as word ranks (Keras' ragged npz); prepared as the
    # DeepLearningFrameworks GRU workload uses them: 30,000 words, length 150.
    "imdb": {
        "base_url": KERAS_DATASETS,
        "files": {
            "imdb.npz": "sha256:69664113be75683a8fe16e3ed0ab59fda8886cb3cd7ada244f7d9544e4676b9f",
        },
        "input": "words150",
        "vocabulary": 30000,
        "length": 150,
    },
    # Random 224x224 images for speed only (no labels worth learning).
    "imagenet_synthetic": {
        "base_url": None,
        "files": {},
        "input": "image224",
        "samples": 256,
        "classes": 1000,
    },
    # bAbI task 2 (two supporting facts, 1k questions per split), as the
    # Keras example reads it. No checksum is published: the first download's
    # SHA-256 is recorded and later downloads are checked against it.
    "babi": {
        "base_url": "https://s3.amazonaws.com/text-datasets/",
        "files": {"babi_tasks_1-20_v1-2.tar.gz": None},
        "input": "story_question",
    },
    # Generated stand-ins in the original file formats (dlbench.data.stand_ins),
    # read by the same code as the dataset they are ``like``: the smoke
    # config and CI run these workloads offline.
    "cifar10_tiny": {
        "like": "cifar10",
        "generated": {"per_batch": 100, "test": 200},
        "files": {"cifar-10-binary.tar.gz": None},
        "input": "image32",
    },
    "imdb_tiny": {
        "like": "imdb",
        "generated": {"train": 512, "test": 256},
        "files": {"imdb.npz": None},
        "input": "words150",
        "vocabulary": 30000,
        "length": 150,
    },
    "babi_tiny": {
        "like": "babi",
        "generated": {"train": 500, "test": 200},
        "files": {"babi_tasks_1-20_v1-2.tar.gz": None},
        "input": "story_question",
    },
    # Generated at the real datasets' sizes and shapes, for speed on a machine
    # without network (config key generated_data): the same work per epoch,
    # data that says nothing about accuracy on the real set.
    "mnist_generated": {
        "like": "mnist",
        "generated": {"train": 60000, "test": 10000},
        "files": {"mnist.npz": None},
        "input": "image28",
    },
    "cifar10_generated": {
        "like": "cifar10",
        "generated": {"per_batch": 10000, "test": 10000},
        "files": {"cifar-10-binary.tar.gz": None},
        "input": "image32",
    },
    "imdb_generated": {
        "like": "imdb",
        "generated": {"train": 25000, "test": 25000},
        "files": {"imdb.npz": None},
        "input": "words150",
        "vocabulary": 30000,
        "length": 150,
    },
    "babi_generated": {
        "like": "babi",
        "generated": {"train": 1000, "test": 1000},
        "files": {"babi_tasks_1-20_v1-2.tar.gz": None},
        "input": "story_question",
    },
    # scikit-learn's bundled 8x8 digits, upsampled to 28x28: real data that
    # needs no network, for the smoke config and the tests.
    "digits": {"base_url": None, "files": {}, "input": "image28"},
}
# Read-only: a config's own datasets join them in a registry (dlbench.registry).
DATASETS = MappingProxyType(_DATASETS)

# By input kind: a shape (a tuple), a dict of shapes (named inputs) or None.
INPUT_SHAPES: Dict[str, Any] = {
    "image28": (28, 28, 1),
    "image32": (32, 32, 3),
    "image224": (224, 224, 3),
    "words150": (150,),
    # Two named inputs; their lengths are those of the longest story and
    # question in the data.
    "story_question": {"story": (None,), "question": (None,)},
    # A synthetic dataset's own shape (the config's synthetic_datasets): input_shape_of
    "synthetic": None,
    # A dataset of the user's (own_datasets) of a shape no other kind has
    "own": None,
}
SYNTHETIC = "synthetic"
OWN_INPUT = "own"
# The key of a registry's dataset entry that holds a dataset of the user's:
# {"definition": its own_datasets entry, "input_shape": [...], "values": ...}
OWN = "own_dataset"


def input_shape(entry):
    """The shape of one sample of a dataset's model input, from its entry (a
    dict of them for several named inputs; None where the data decides a length)."""
    if SYNTHETIC in entry:
        return tuple(entry[SYNTHETIC]["input_shape"])
    if OWN in entry:
        return tuple(entry[OWN]["input_shape"])
    return INPUT_SHAPES[entry["input"]]


# Several named inputs are stored as x_<split>__<name> in a prepared file.
INPUT_SEPARATOR = "__"
# The array a prepared file holds instead of the data where the data could
# not be had (a download that failed): the reason.
UNAVAILABLE_DATA = "unavailable"
# How a run's record says so (its reason begins with it).
NO_DATA_REASON = "dataset {} unavailable: "
# How it says that the user's own files were refused at their preparation.
REFUSED_DATA_REASON = "dataset {} refused: "

# A data mirror with one of these schemes is a URL base, anything else a folder.
URL_SCHEMES = ("http", "https", "ftp", "sftp")


def source_of(dataset, filename, mirror=None):
    """Where to get one raw file of a built-in dataset: the canonical URL, or
    the same file name under ``mirror`` (a URL base or a local folder) for
    offline clusters."""
    base = mirror or DATASETS[dataset]["base_url"]
    if urlparse(base).scheme in URL_SCHEMES:
        return base.rstrip("/") + "/" + filename
    return os.path.join(os.path.expanduser(base), filename)


# The suffix of a downloaded dataset's stand-in of the same shape and size.
GENERATED_SUFFIX = "_generated"
