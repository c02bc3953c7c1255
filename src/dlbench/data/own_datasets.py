"""A dataset of the user's own (the config's ``own_datasets``), as planning
sees it: its files found, their headers read (never their data), and what
follows: the shape of one sample, the kind of its values, the files the
preparation reads, or the mistake that refuses it (``DataRefused``, one
line that names the config key). dlbench.data.own_preparation reads the
data itself.

The formats:

- ``npz``: one file with ``x_train``, ``y_train`` and, for its own test set,
  ``x_test``, ``y_test`` (the layout of Keras' mnist.npz); or ``x`` and ``y``.
- ``npy``: one file per array, ``train: {x: ..., y: ...}``.
- ``images``: a folder with one sub-folder per class, as Keras'
  ``image_dataset_from_directory`` reads it (the classes in sorted order,
  the images searched in every level below).
- ``csv``: numeric feature columns and one label column (class names or ids).
"""

import csv
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

import numpy as np

from dlbench.catalog import INPUT_SHAPES, OWN_INPUT
from dlbench.data.raw_formats import read_npy_header

FORMATS = ("npz", "npy", "images", "csv")
# The extensions Keras' image_dataset_from_directory takes, in any case.
IMAGE_SUFFIXES = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
CHANNELS = {"grayscale": 1, "rgb": 3}
# The schema's defaults (workflow/schemas/config.schema.yaml), for an entry
# built without it; label and color_mode have none there, so that naming
# them for a format that does not read them is refused (FORMAT_KEYS).
DEFAULT_TEST_FRACTION = 0.2
DEFAULT_SPLIT_SEED = 0
DEFAULT_LABEL = "label"
DEFAULT_COLOR_MODE = "rgb"
# The keys one format reads, and the formats that read them.
FORMAT_KEYS = {"image_size": ("images",), "color_mode": ("images",), "label": ("csv",)}

# What a sample's values are, which decides how they are prepared:
IMAGES = "images"  # uint8 pixels (decoded images, or uint8 arrays): scaled to [0, 1]
FLOATS = "floats"  # kept as they are, as float32
WORD_IDS = "word_ids"  # integer ids, one row per sample: int32, vocabulary = largest + 1
# The names a label or input array may have in an npz, by split.
NPZ_SPLITS = {"train": ("x_train", "y_train"), "test": ("x_test", "y_test")}
NPZ_UNSPLIT = ("x", "y")


class DataRefused(ValueError):
    """A dataset of the user's that cannot be used as given: one line that
    says where and why."""


class Probe(NamedTuple):
    """What planning knows of a dataset of the user's: the shape of one
    sample (channels last), the kind of its values (``IMAGES``, ``FLOATS``
    or ``WORD_IDS``), every file the preparation reads, and whether a test
    set is given (else the preparation splits one off)."""

    input_shape: Tuple[int, ...]
    values: str
    files: Tuple[str, ...]
    has_test: bool

    @property
    def input_kind(self) -> str:
        """The built-in input kind of this shape (a built-in workload takes
        it: 28x28 grey images are image28), else ``OWN_INPUT``."""
        for kind, shape in sorted(INPUT_SHAPES.items()):
            if not isinstance(shape, tuple) or shape != self.input_shape:
                continue
            if (kind.startswith("words")) == (self.values == WORD_IDS):
                return kind
        return OWN_INPUT


def key(name: str, part: Optional[str] = None) -> str:
    """The config key of a dataset of the user's, or of one of its parts."""
    return "own_datasets.{}{}".format(name, "." + part if part else "")


def path_of(name: str, part: str, given: str, folder: bool = False) -> Path:
    """The path the config gives, relative to the working directory; refused
    where nothing (of that kind) is there."""
    path = Path(given).expanduser()
    exists = path.is_dir() if folder else path.is_file()
    if not exists:
        raise DataRefused(
            "{}: no {} {} (paths are relative to the working directory{})".format(
                key(name, part),
                "folder" if folder else "file",
                given,
                "; it is a file" if folder and path.is_file() else "",
            )
        )
    return path


def probe(name: str, entry: Mapping[str, Any]) -> Probe:
    """Read the headers of the files of ``entry`` (a config's own_datasets
    entry) and what follows from them, or refuse it."""
    fmt = entry["format"]
    for option, formats in sorted(FORMAT_KEYS.items()):
        if option in entry and fmt not in formats:
            raise DataRefused(
                "{}: only format {} reads it; leave it out for format {}".format(
                    key(name, option), " or ".join(formats), fmt
                )
            )
    splits = ("train", "test") if entry.get("test") is not None else ("train",)
    paired = fmt == "npy"
    for split in splits:
        if isinstance(entry[split], dict) != paired:
            raise DataRefused(
                "{}: {}".format(
                    key(name, split),
                    "format npy names two files, {x: ..., y: ...}"
                    if paired
                    else "format {} names one {}".format(
                        fmt, "folder" if fmt == IMAGES else "file"
                    ),
                )
            )
    return {"npz": _probe_npz, "npy": _probe_npy, "images": _probe_images, "csv": _probe_csv}[fmt](
        name, entry
    )


# NumPy arrays


def _npz_headers(name, part, path):
    """{array name: (shape, dtype)} of an .npz, from its members' headers."""
    try:
        with zipfile.ZipFile(str(path)) as archive:
            found = {}
            for member in archive.namelist():
                if member.endswith(".npy"):
                    with archive.open(member) as handle:
                        shape, _, dtype = read_npy_header(handle)
                    found[member[: -len(".npy")]] = (tuple(shape), dtype)
            return found
    except (zipfile.BadZipFile, ValueError, KeyError) as error:
        raise DataRefused(
            "{}: {} is not an .npz (numpy.savez writes one): {}".format(
                key(name, part), path, error
            )
        ) from None


def _npy_header(name, part, path):
    try:
        with open(str(path), "rb") as handle:
            shape, _, dtype = read_npy_header(handle)
        return tuple(shape), dtype
    except (ValueError, KeyError) as error:
        raise DataRefused(
            "{}: {} is not an .npy (numpy.save writes one): {}".format(key(name, part), path, error)
        ) from None


def _probe_npz(name, entry):
    train = path_of(name, "train", entry["train"])
    arrays = _npz_headers(name, "train", train)
    files = [str(train)]
    pairs = {}
    if all(array in arrays for array in NPZ_SPLITS["train"]):
        pairs["train"] = tuple(arrays[array] for array in NPZ_SPLITS["train"])
        names = {"train": NPZ_SPLITS["train"]}
        if all(array in arrays for array in NPZ_SPLITS["test"]):
            pairs["test"] = tuple(arrays[array] for array in NPZ_SPLITS["test"])
            names["test"] = NPZ_SPLITS["test"]
    elif all(array in arrays for array in NPZ_UNSPLIT):
        pairs["train"] = tuple(arrays[array] for array in NPZ_UNSPLIT)
        names = {"train": NPZ_UNSPLIT}
    else:
        raise DataRefused(
            "{}: {} holds the arrays {}: name them x_train, y_train (and x_test, y_test), "
            "or x and y".format(key(name, "train"), train, sorted(arrays) or "none")
        )
    if entry.get("test") is not None:
        if "test" in pairs:
            raise DataRefused(
                "{}: {} already holds x_test and y_test; leave test out or them".format(
                    key(name, "test"), train
                )
            )
        test = path_of(name, "test", entry["test"])
        arrays = _npz_headers(name, "test", test)
        for candidate in (NPZ_SPLITS["test"], NPZ_UNSPLIT):
            if all(array in arrays for array in candidate):
                pairs["test"] = tuple(arrays[array] for array in candidate)
                names["test"] = candidate
                break
        else:
            raise DataRefused(
                "{}: {} holds the arrays {}: name them x_test and y_test, or x and y".format(
                    key(name, "test"), test, sorted(arrays) or "none"
                )
            )
        files.append(str(test))
    return _probe_arrays(name, pairs, names, files)


def _probe_npy(name, entry):
    pairs, names, files = {}, {}, []
    for split in ("train", "test"):
        if entry.get(split) is None:
            continue
        paths = [path_of(name, "{}.{}".format(split, part), entry[split][part]) for part in "xy"]
        pairs[split] = tuple(
            _npy_header(name, "{}.{}".format(split, part), path) for part, path in zip("xy", paths)
        )
        names[split] = tuple("{}.{}".format(split, part) for part in "xy")
        files += [str(path) for path in paths]
    return _probe_arrays(name, pairs, names, files)


def _probe_arrays(name, pairs, names, files):
    """The probe of arrays by split: {split: ((x shape, x dtype), (y shape,
    y dtype))}, ``names`` {split: (x name, y name)} for the messages."""
    shapes = {}
    for split, ((x_shape, x_dtype), (y_shape, y_dtype)) in sorted(pairs.items()):
        x_name, y_name = names[split]
        if not x_shape or not y_shape or x_shape[0] != y_shape[0]:
            raise DataRefused(
                "{}: {} has {} samples and {} {}: one label per sample".format(
                    key(name),
                    x_name,
                    x_shape[0] if x_shape else "no",
                    y_name,
                    y_shape[0] if y_shape else "none",
                )
            )
        if len(y_shape) > 2 or y_dtype.kind not in "biuf":
            raise DataRefused(
                "{}: {} is {} of shape {}: labels are integers, one per sample (0 to classes - "
                "1), or one-hot rows".format(key(name), y_name, y_dtype, y_shape)
            )
        shapes[split] = (x_shape[1:], _values(name, x_name, x_shape, x_dtype))
    if len(set(shapes.values())) > 1:
        raise DataRefused(
            "{}: the training samples are {} of {}, the test samples {} of {}: the same "
            "shape and kind for both".format(
                key(name), shapes["train"][0], shapes["train"][1], *shapes["test"]
            )
        )
    sample, values = shapes["train"]
    if values == IMAGES and len(sample) == 2:  # grey images without their channel axis
        sample = sample + (1,)
    return Probe(tuple(int(n) for n in sample), values, tuple(files), "test" in pairs)


def _values(name, array, shape, dtype):
    if dtype == np.uint8 and len(shape) in (3, 4):
        return IMAGES
    if dtype.kind == "f":
        return FLOATS
    if dtype.kind in "iu" and len(shape) == 2:
        return WORD_IDS
    raise DataRefused(
        "{}: {} is {} of shape {}: give images as uint8 (N, height, width[, channels]), "
        "word ids as integers (N, length), anything else as floats".format(
            key(name), array, dtype, shape
        )
    )


# Image folders


def class_folders(name: str, part: str, folder: Path) -> Dict[str, List[Path]]:
    """{class name: its image files, sorted}, the classes being the
    sub-folders of ``folder`` in sorted order (as Keras labels them)."""
    classes = {}
    for sub in sorted(p for p in folder.iterdir() if p.is_dir()):
        images = sorted(
            p for p in sub.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
        )
        if not images:
            raise DataRefused(
                "{}: the class folder {} holds no images ({})".format(
                    key(name, part), sub, " ".join(IMAGE_SUFFIXES)
                )
            )
        classes[sub.name] = images
    if len(classes) < 2:
        raise DataRefused(
            "{}: {} has {} class folder{}: put each class's images in a folder of its own "
            "(at least two)".format(
                key(name, part), folder, len(classes), "" if len(classes) == 1 else "s"
            )
        )
    return classes


def _probe_images(name, entry):
    if "image_size" not in entry:
        raise DataRefused(
            "{}: an images dataset needs the size its images are resized to, "
            "[height, width]".format(key(name, "image_size"))
        )
    found = {}
    for split in ("train", "test"):
        if entry.get(split) is not None:
            found[split] = class_folders(name, split, path_of(name, split, entry[split], True))
    if "test" in found and sorted(found["test"]) != sorted(found["train"]):
        missing = sorted(set(found["train"]) - set(found["test"]))
        extra = sorted(set(found["test"]) - set(found["train"]))
        raise DataRefused(
            "{}: {}".format(
                key(name, "test"),
                "the class{} {} ha{} no test sample (no folder)".format(
                    "es" if len(missing) > 1 else "",
                    ", ".join(missing),
                    "ve" if len(missing) > 1 else "s",
                )
                if missing
                else "the class{} {} ha{} no training sample".format(
                    "es" if len(extra) > 1 else "",
                    ", ".join(extra),
                    "ve" if len(extra) > 1 else "s",
                ),
            )
        )
    height, width = entry["image_size"]
    channels = CHANNELS[entry.get("color_mode", DEFAULT_COLOR_MODE)]
    files = tuple(str(p) for split in found.values() for images in split.values() for p in images)
    return Probe((height, width, channels), IMAGES, files, "test" in found)


# CSV tables


def csv_columns(name: str, part: str, path: Path) -> List[str]:
    """The column names of a CSV's header line."""
    with open(str(path), newline="") as handle:
        header = next(csv.reader(handle), None)
    if not header:
        raise DataRefused("{}: {} is empty".format(key(name, part), path))
    return [column.strip() for column in header]


def _probe_csv(name, entry):
    label = entry.get("label", DEFAULT_LABEL)
    columns = {}
    for split in ("train", "test"):
        if entry.get(split) is None:
            continue
        path = path_of(name, split, entry[split])
        columns[split] = (path, csv_columns(name, split, path))
        if label not in columns[split][1]:
            raise DataRefused(
                "{}: {} has no column {!r} (its columns: {}); name the label column with {}".format(
                    key(name, split),
                    path,
                    label,
                    ", ".join(columns[split][1][:12])
                    + (", ..." if len(columns[split][1]) > 12 else ""),
                    key(name, "label"),
                )
            )
    if "test" in columns and columns["test"][1] != columns["train"][1]:
        raise DataRefused(
            "{}: {} has other columns than {}: the same columns in the same order".format(
                key(name, "test"), columns["test"][0], columns["train"][0]
            )
        )
    features = len(columns["train"][1]) - 1
    if features < 1:
        raise DataRefused(
            "{}: {} has no column but its labels".format(key(name, "train"), columns["train"][0])
        )
    files = tuple(str(path) for path, _ in columns.values())
    return Probe((features,), FLOATS, files, "test" in columns)


def summary(probe: Probe) -> Dict[str, Any]:
    """The probe as the registry's dataset entry keeps it (JSON)."""
    return {
        "input_kind": probe.input_kind,
        "input_shape": list(probe.input_shape),
        "values": probe.values,
        "files": list(probe.files),
        "has_test": probe.has_test,
    }
