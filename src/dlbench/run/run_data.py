"""The data a run reads: the prepared arrays of a dataset (its seal checked
first), the rows of a model's inputs, the epoch's sample order (the same for
every backend) and Keras' validation split. A leaf of the package: the
harness, the equivalence check, the weight drawing and the model check use
it, and it imports none of them. Importable on Python 3.6.
"""

import json
import math
import os
from typing import TYPE_CHECKING, Any, Dict, Union

from dlbench import catalog
from dlbench.run import integrity

if TYPE_CHECKING:
    import numpy

# A model's input: one array, or a dict of named arrays (several inputs),
# the samples along the first axis.
Inputs = Union["numpy.ndarray", Dict[str, "numpy.ndarray"]]


def epoch_order(seed, epoch, n_samples):
    """The sample order of one epoch: a function of seed and epoch only, so
    every backend sees the same batches in the same order."""
    import numpy as np

    return np.random.RandomState([seed, epoch]).permutation(n_samples)


# The array a prepared dataset holds instead of its data where the data
# could not be had (a download that failed): the reason, for every rule that
# reads the dataset to pass on (its cells become unavailable).
UNAVAILABLE = catalog.UNAVAILABLE_DATA


class DataUnavailable(RuntimeError):
    """A prepared dataset that holds the reason its data could not be had."""


# Beside it, in a dataset of the user's that its preparation refused (a
# mistake in the files): its cells are invalid rather than unavailable.
REFUSED = "refused"


def write_unavailable(path, reason, refused=False):
    """Write the prepared dataset of a dataset whose data could not be had
    (``refused``: the user's files have a mistake)."""
    import numpy as np

    arrays = {UNAVAILABLE: np.array(str(reason))}
    if refused:
        arrays[REFUSED] = np.array(True)
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def is_refused(path):
    """Whether the prepared dataset at ``path`` holds the reason its
    preparation refused the user's files."""
    import numpy as np

    with np.load(path, allow_pickle=False) as arrays:
        return REFUSED in arrays.files


def unavailable_reason(path):
    """Why the prepared dataset at ``path`` holds no data, or None (also for
    no file at all: reading it says so, where it is read)."""
    import numpy as np

    if not os.path.isfile(str(path)):
        return None
    with np.load(path, allow_pickle=False) as arrays:
        if UNAVAILABLE in arrays.files:
            return str(arrays[UNAVAILABLE])
    return None


def load_dataset(path):
    """The prepared arrays, one-hot labels beside the integer ones, and
    ``meta``: what a model must know about its inputs (classes, ...). A model
    with several inputs gets a dict of named arrays per split. A dataset whose
    data could not be had raises ``DataUnavailable`` with the reason."""
    import numpy as np

    if os.path.exists(integrity.seal_path(path)):  # the workflow's files are all sealed
        integrity.verify(path)
    reason = unavailable_reason(path)
    if reason:
        raise DataUnavailable(reason)
    with np.load(path, allow_pickle=False) as arrays:
        data = {}
        for split in ("train", "test"):
            prefix = "x_{}{}".format(split, catalog.INPUT_SEPARATOR)
            named = {k[len(prefix) :]: arrays[k] for k in arrays.files if k.startswith(prefix)}
            data["x_" + split] = named or arrays["x_" + split]
            data["y_" + split] = arrays["y_" + split]
        meta = json.loads(str(arrays["meta"]))
    eye = np.eye(meta["classes"], dtype="float32")
    data["y_train_onehot"] = eye[data["y_train"]]
    data["y_test_onehot"] = eye[data["y_test"]]
    x = data["x_train"]
    shape = (
        {k: list(v.shape[1:]) for k, v in x.items()} if isinstance(x, dict) else list(x.shape[1:])
    )
    data["meta"] = dict(meta, input_shape=shape)
    return data


def take(x: Inputs, rows: Any) -> Inputs:
    """Rows of the model input, one array or a dict of named arrays (a copy)."""
    if isinstance(x, dict):
        return {name: array[rows] for name, array in x.items()}
    return x[rows]


def first_samples(x, y, count):
    """The first ``count`` samples (a workload's ``train_samples``)."""
    if count > len(y):
        raise ValueError(
            "train_samples {} is more than the {} samples of the training split".format(
                count, len(y)
            )
        )
    return take(x, slice(0, count)), y[:count]


def validation_split(x, y, fraction):
    """Keras' ``validation_split``: the last ``fraction`` of the training
    data, taken before any shuffling, held out for validation (split where
    Keras 3 splits)."""
    n = len(y)
    split_at = int(math.floor(n * (1.0 - fraction)))
    if split_at in (0, n):
        raise ValueError(
            "validation_split {} leaves no data on one side of {} samples".format(fraction, n)
        )
    head, tail = slice(0, split_at), slice(split_at, n)
    return (take(x, head), y[head]), (take(x, tail), y[tail])
