"""What the benchmark knows about: datasets, models, backends.

Plain data only, importable on every pinned Python (3.6 and later), so that the
workflow, the harness inside a backend environment and the tests share one list.
"""

import os.path
from urllib.parse import urlparse

# Where a dataset's raw files come from. ``sha256`` (or ``md5:...``) is checked
# before anything reads the file. ``base_url`` is the canonical location that
# Keras' own loaders use; ``data_mirror`` in the config replaces it.
DATASETS = {
    "mnist": {
        "base_url": "https://storage.googleapis.com/tensorflow/tf-keras-datasets/",
        "files": {
            "mnist.npz": "sha256:731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",
        },
        "input_shape": (28, 28, 1),
        "classes": 10,
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
        "input_shape": (28, 28, 1),
        "classes": 10,
    },
    # scikit-learn's bundled 8x8 digits, upsampled to 28x28: real data that
    # needs no network, for the smoke config and the tests.
    "digits": {
        "base_url": None,
        "files": {},
        "input_shape": (28, 28, 1),
        "classes": 10,
    },
}

# Which input shapes a model accepts. Parameter counts are those of
# WORKLOADS.md for 28x28x1 inputs and 10 classes; the tests check them.
MODELS = {
    "mlp": {"input_shapes": [(28, 28, 1)], "parameters": 669706},
    "cnn": {"input_shapes": [(28, 28, 1)], "parameters": 1199882},
}

TASKS = ("train",)
URL_SCHEMES = ("http", "https", "ftp", "sftp")

# A backend is a family (which adapter builds and runs the model) and the
# framework underneath. One adapter serves every backend of its family.
BACKENDS = {
    "keras-tensorflow": {"family": "keras", "framework": "tensorflow"},
    "keras-jax": {"family": "keras", "framework": "jax"},
    "keras-torch": {"family": "keras", "framework": "torch"},
}


def model_fits_dataset(model, dataset):
    return tuple(DATASETS[dataset]["input_shape"]) in [
        tuple(shape) for shape in MODELS[model]["input_shapes"]
    ]


def source_of(dataset, filename, mirror=None):
    """Where to get one raw file: the canonical URL, or the same file name
    under ``mirror`` (a URL base or a local folder) for offline clusters."""
    base = mirror or DATASETS[dataset]["base_url"]
    if urlparse(base).scheme in URL_SCHEMES:
        return base.rstrip("/") + "/" + filename
    return os.path.join(os.path.expanduser(base), filename)
