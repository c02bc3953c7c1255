"""Preparing a dataset of the user's (the config's ``own_datasets``): its
files read and checked, converted to the workflow's prepared format (as
dlbench.data.preparation writes it for the built-in datasets) or refused
with one line (``own_datasets.DataRefused``) that says where the mistake is.

- Inputs: uint8 images scaled to float32 in [0, 1] with a channel axis;
  floats kept as float32; integer word ids as int32, the vocabulary their
  largest id + 1. NaN or infinite values are refused, counted and located.
- Labels: integer class ids (0 to classes - 1; floats that are whole numbers
  too) or one-hot rows in arrays; a CSV's label column holds class names or
  numbers, its classes its distinct values in sorted order; an image's class
  its folder's place in the sorted folder names.
- The test set: the user's where given (their order kept; an image folder's
  shuffled with ``split_seed``), else ``test_fraction`` of each class drawn
  with ``split_seed``. Every class has a test sample, or the dataset is
  refused.
- An image folder is decoded image by image into the prepared file
  (dlbench.data.npz_writer): memory holds a block of images, not the folder.
"""

import json
import os
import time
from pathlib import Path
from typing import Any, Dict, Mapping, Tuple

import numpy as np

from dlbench.data import own_datasets
from dlbench.data.npz_writer import NpzWriter
from dlbench.data.own_datasets import (
    DEFAULT_LABEL,
    DEFAULT_SPLIT_SEED,
    DEFAULT_TEST_FRACTION,
    IMAGES,
    NPZ_SPLITS,
    NPZ_UNSPLIT,
    WORD_IDS,
    DataRefused,
    key,
)

# Images decoded and written at a time.
IMAGE_BLOCK = 256
SPLITS = ("train", "test")


def prepare(name: str, entry: Mapping[str, Any], output, log=print) -> Dict[str, Any]:
    """Write the prepared ``output`` (.npz) of the dataset ``name`` defined
    by ``entry``, or raise ``DataRefused``. Returns its meta."""
    probe = own_datasets.probe(name, entry)  # again: a file may have changed since planning
    reader = {"npz": _read_npz, "npy": _read_npy, "images": _list_images, "csv": _read_csv}
    inputs, labels, class_names = reader[entry["format"]](name, entry)
    classes = len(class_names) if class_names else _classes(labels)
    seed = entry.get("split_seed", DEFAULT_SPLIT_SEED)
    if "test" not in labels:
        inputs, labels = split(
            name,
            inputs,
            labels,
            entry.get("test_fraction", DEFAULT_TEST_FRACTION),
            seed,
            classes,
            class_names,
        )
    elif entry["format"] == "images":  # listed class by class: mixed, as Keras' loader does
        for s in SPLITS:
            order = np.random.RandomState(seed).permutation(len(labels[s]))
            inputs[s], labels[s] = [inputs[s][i] for i in order], labels[s][order]
    check_every_class_tested(name, labels, classes, class_names)
    meta = {"classes": classes, "format": entry["format"], "values": probe.values}
    if class_names:
        meta["class_names"] = class_names
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp.npz")
    try:
        with NpzWriter(tmp) as out:
            for s in SPLITS:
                if entry["format"] == "images":
                    _stream_images(out, name, entry, s, inputs[s], probe.input_shape, log)
                else:
                    x = model_inputs(name, s, inputs[s], probe.values)
                    if probe.values == WORD_IDS:
                        meta["vocabulary"] = max(
                            meta.get("vocabulary", 2), int(x.max(initial=0)) + 1
                        )
                    out.add("x_" + s, x)
                out.add("y_" + s, labels[s].astype("int64"))
            out.add("meta", np.array(json.dumps(meta)))
        os.replace(str(tmp), str(output))
    finally:
        if tmp.exists():
            tmp.unlink()
    log(
        "{}: {} training and {} test samples of {}, {} classes".format(
            name, len(labels["train"]), len(labels["test"]), list(probe.input_shape), classes
        )
    )
    return meta


# Reading the formats: ({split: inputs}, {split: labels}, class names or None)


def _read_npz(name, entry):
    inputs, labels = {}, {}
    with np.load(str(entry["train"]), allow_pickle=False) as arrays:
        for s in SPLITS:
            if all(array in arrays.files for array in NPZ_SPLITS[s]):
                x, y = NPZ_SPLITS[s]
                inputs[s], labels[s] = arrays[x], class_ids(name, y, arrays[y])
        if not inputs:
            inputs["train"] = arrays[NPZ_UNSPLIT[0]]
            labels["train"] = class_ids(name, NPZ_UNSPLIT[1], arrays[NPZ_UNSPLIT[1]])
    if entry.get("test") is not None:
        with np.load(str(entry["test"]), allow_pickle=False) as arrays:
            x, y = NPZ_SPLITS["test"] if NPZ_SPLITS["test"][0] in arrays.files else NPZ_UNSPLIT
            inputs["test"], labels["test"] = arrays[x], class_ids(name, "test " + y, arrays[y])
    return inputs, labels, None


def _read_npy(name, entry):
    inputs, labels = {}, {}
    for s in SPLITS:
        if entry.get(s) is not None:
            inputs[s] = np.load(str(entry[s]["x"]), allow_pickle=False, mmap_mode="r")
            y = np.load(str(entry[s]["y"]), allow_pickle=False)
            labels[s] = class_ids(name, "{}.y".format(s), y)
    return inputs, labels, None


def _list_images(name, entry):
    inputs, labels, class_names = {}, {}, None
    for s in SPLITS:
        if entry.get(s) is None:
            continue
        classes = own_datasets.class_folders(name, s, Path(entry[s]))
        class_names = class_names or sorted(classes)
        inputs[s] = [path for c in class_names for path in classes[c]]
        labels[s] = np.repeat(np.arange(len(class_names)), [len(classes[c]) for c in class_names])
    return inputs, labels, class_names


def _read_csv(name, entry):
    import pandas as pd

    label = entry.get("label", DEFAULT_LABEL)
    tables = {}
    for s in SPLITS:
        if entry.get(s) is not None:
            tables[s] = pd.read_csv(str(entry[s]), skipinitialspace=True)
            tables[s].columns = [str(column).strip() for column in tables[s].columns]
    names = pd.concat([tables[s][label] for s in tables])
    missing = names.isna().to_numpy().nonzero()[0]
    if len(missing):
        s, row = _where_in_tables(tables, missing[0])
        raise DataRefused(
            "{}: {} has no label on line {} (column {!r})".format(
                key(name, s), entry[s], row + 2, label
            )
        )
    numeric = pd.api.types.is_numeric_dtype(names)
    values = sorted(set(names.tolist()), key=float if numeric else str)
    class_names = [_label_text(v) for v in values]
    index = {v: i for i, v in enumerate(values)}
    inputs, labels = {}, {}
    for s, table in tables.items():
        if s == "test":
            unknown = sorted(set(table[label]) - set(tables["train"][label]), key=str)
            if unknown:
                raise DataRefused(
                    "{}: the label{} {} ha{} no training sample".format(
                        key(name, "test"),
                        "s" if len(unknown) > 1 else "",
                        ", ".join(map(_label_text, unknown[:5])),
                        "ve" if len(unknown) > 1 else "s",
                    )
                )
        features = table.drop(columns=[label])
        text = [c for c in features.columns if not pd.api.types.is_numeric_dtype(features[c])]
        if text:
            column = features[text[0]]
            bad = pd.to_numeric(column, errors="coerce").isna() & column.notna()
            row = int(bad.to_numpy().nonzero()[0][0])
            raise DataRefused(
                "{}: {} has text in the feature column{} {} (line {}: {!r}): features are "
                "numbers; the only other column is the label ({})".format(
                    key(name, s),
                    entry[s],
                    "s" if len(text) > 1 else "",
                    ", ".join(repr(c) for c in text[:5]),
                    row + 2,
                    column.iloc[row],
                    key(name, "label"),
                )
            )
        values_found = features.to_numpy(dtype="float64")
        bad = ~np.isfinite(values_found)
        if bad.any():
            row, column = (int(i[0]) for i in bad.nonzero())
            raise DataRefused(
                "{}: {} holds {} empty, NaN or infinite value{} "
                "(first: column {!r}, line {})".format(
                    key(name, s),
                    entry[s],
                    int(bad.sum()),
                    "s" if bad.sum() > 1 else "",
                    features.columns[column],
                    row + 2,
                )
            )
        inputs[s] = values_found
        labels[s] = np.array([index[v] for v in table[label]], dtype="int64")
    return inputs, labels, class_names


def _label_text(value):
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _where_in_tables(tables, position):
    for s, table in tables.items():
        if position < len(table):
            return s, position
        position -= len(table)
    raise IndexError(position)


# Labels


def class_ids(name: str, array: str, y) -> np.ndarray:
    """Integer class ids from labels that are integers (whole-number floats
    too) or one-hot rows; refused otherwise."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim == 2:
        one_hot = np.isin(y, (0, 1)).all(axis=1) & (y.sum(axis=1) == 1)
        if not one_hot.all():
            row = int((~one_hot).nonzero()[0][0])
            raise DataRefused(
                "{}: {} has rows that are not one-hot (sample {}: {}): labels are class ids or "
                "one-hot rows".format(key(name), array, row, np.array2string(y[row], threshold=8))
            )
        return y.argmax(axis=1).astype("int64")
    if y.dtype.kind == "f":
        whole = np.isfinite(y) & (np.mod(y, 1) == 0)
        if not whole.all():
            row = int((~whole).nonzero()[0][0])
            raise DataRefused(
                "{}: {} holds labels that are not whole numbers (sample {}: {}): labels are class "
                "ids (0 to classes - 1) or one-hot rows".format(key(name), array, row, y[row])
            )
    y = y.astype("int64")
    if len(y) and y.min() < 0:
        row = int((y < 0).nonzero()[0][0])
        raise DataRefused(
            "{}: {} holds the label {} (sample {}): class ids are 0 to classes - 1".format(
                key(name), array, y[row], row
            )
        )
    return y


def _classes(labels):
    return int(max(int(y.max(initial=0)) for y in labels.values())) + 1


def _class_name(c, class_names):
    return repr(class_names[c]) if class_names else str(c)


def split(name, inputs, labels, fraction, seed, classes, class_names=None):
    """The training set split in two: ``fraction`` of each class's samples
    (at least one) drawn for the test set with ``seed``, both sets in a
    seeded random order."""
    rng = np.random.RandomState(seed)
    y = labels["train"]
    test = []
    for c in range(classes):
        members = (y == c).nonzero()[0]
        if len(members) == 1:
            raise DataRefused(
                "{}: the class {} has one sample: none is left for the test set (give more, or "
                "a test set)".format(key(name), _class_name(c, class_names))
            )
        if len(members):
            take = min(len(members) - 1, max(1, int(round(fraction * len(members)))))
            test.extend(rng.permutation(members)[:take].tolist())
    is_test = np.zeros(len(y), dtype=bool)
    is_test[test] = True
    parts = {
        "train": rng.permutation((~is_test).nonzero()[0]),
        "test": rng.permutation(is_test.nonzero()[0]),
    }
    x = inputs["train"]
    pick = (lambda rows: [x[i] for i in rows]) if isinstance(x, list) else (lambda rows: x[rows])
    return {s: pick(rows) for s, rows in parts.items()}, {s: y[rows] for s, rows in parts.items()}


def check_every_class_tested(name, labels, classes, class_names=None):
    """Refuse a dataset in which a class has no test sample: its accuracy
    would say nothing of that class."""
    counts = {s: np.bincount(labels[s], minlength=classes) for s in SPLITS}
    untested = (counts["test"] == 0).nonzero()[0].tolist()
    if not untested:
        return
    shown = ", ".join(
        _class_name(c, class_names) + ("" if counts["train"][c] else " (nor a training sample)")
        for c in untested[:5]
    )
    raise DataRefused(
        "{}: the class{} {} {} no test sample".format(
            key(name),
            "es" if len(untested) > 1 else "",
            shown,
            "have" if len(untested) > 1 else "has",
        )
    )


# Inputs


def model_inputs(name: str, split_name: str, x, values: str) -> np.ndarray:
    """A split's inputs as the model takes them, checked."""
    x = np.asarray(x)
    if values == IMAGES:
        x = x.astype("float32") / 255.0
        return x[..., np.newaxis] if x.ndim == 3 else x
    if values == WORD_IDS:
        if len(x) and x.min() < 0:
            raise DataRefused(
                "{}: the {} word ids hold {} (ids are 0 for padding, then 1, 2, ...)".format(
                    key(name), split_name, x.min()
                )
            )
        return x.astype("int32")
    x = x.astype("float32")
    check_finite(name, split_name, x)
    return x


def check_finite(name: str, split_name: str, x: np.ndarray) -> None:
    bad = ~np.isfinite(x)
    if not bad.any():
        return
    first = tuple(int(i[0]) for i in bad.nonzero())
    nan = int(np.isnan(x).sum())
    raise DataRefused(
        "{}: the {} inputs hold {} NaN and {} infinite value{} (as float32; first at sample {}, "
        "position {})".format(
            key(name),
            split_name,
            nan,
            int(bad.sum()) - nan,
            "" if int(bad.sum()) - nan == 1 else "s",
            first[0],
            first[1:],
        )
    )


def decode_image(path: Path, size: Tuple[int, int], channels: int) -> np.ndarray:
    """One image file as uint8 (height, width, channels), converted to grey
    or RGB and resized with Pillow's bilinear filter where its size differs."""
    from PIL import Image

    height, width = size
    with Image.open(str(path)) as opened:
        image = opened.convert("L" if channels == 1 else "RGB")
    if image.size != (width, height):
        image = image.resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(image, dtype=np.uint8).reshape(height, width, channels)


def _stream_images(out, name, entry, split_name, paths, shape, log):
    size, channels = tuple(entry["image_size"]), shape[-1]
    started = time.monotonic()

    def blocks():
        for first in range(0, len(paths), IMAGE_BLOCK):
            block = np.empty((min(IMAGE_BLOCK, len(paths) - first),) + tuple(shape), "float32")
            for row, path in enumerate(paths[first : first + IMAGE_BLOCK]):
                try:
                    block[row] = decode_image(path, size, channels)
                except Exception as error:  # Pillow raises many kinds for a broken file
                    raise DataRefused(
                        "{}: the image {} does not decode: {}: {}".format(
                            key(name, split_name), path, type(error).__name__, error
                        )
                    ) from None
            yield block / 255.0
            done = first + len(block)
            if done == len(paths) or (done // IMAGE_BLOCK) % 20 == 0:
                log(
                    "{} {}: {} of {} images ({:.0f} a second)".format(
                        name,
                        split_name,
                        done,
                        len(paths),
                        done / max(time.monotonic() - started, 1e-9),
                    )
                )

    out.stream("x_" + split_name, (len(paths),) + tuple(shape), "float32", blocks())
