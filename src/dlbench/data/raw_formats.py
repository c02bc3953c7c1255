"""Reading the datasets' raw files in their original formats (MNIST's IDX,
CIFAR-10's binary records, Keras' ragged imdb.npz, the bAbI tasks' text),
from the verified files as they are: nothing is extracted, and nothing is
unpickled but numpy arrays."""

import gzip
import pickle
import re
import tarfile
import zipfile

import numpy as np


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
