"""Small datasets of each format a dataset of your own may have, generated,
for config/questions/own-data.yaml and the tests: a folder of PNG images
(one sub-folder per class, a test folder beside it), sentences as word ids
in an .npz, grey images as an .npy pair, and a CSV of numeric features with
class names in a label column. Each class differs from the others in its
inputs (a shape, its words, a brightness, the features' means), so a model
learns them and its accuracy means something.

    python -m dlbench.data.own_examples examples/own-data
"""

import argparse
import csv
from pathlib import Path

import numpy as np

SHAPES = ("disc", "square", "stripes")
IMAGE_SIZE = 36  # the PNGs' own size; the config resizes them
SPECIES = ("alder", "birch", "cedar")


def _shape(kind, rng, size=IMAGE_SIZE):
    """An RGB image of ``kind`` at a random place, colour and size, under noise."""
    yy, xx = np.mgrid[:size, :size]
    cy, cx = rng.randint(10, size - 10, 2)
    radius = rng.randint(6, 10)
    if kind == "disc":
        mask = (yy - cy) ** 2 + (xx - cx) ** 2 <= radius**2
    elif kind == "square":
        mask = (abs(yy - cy) <= radius) & (abs(xx - cx) <= radius)
    else:
        mask = (xx // 3) % 2 == 0
    colour = rng.randint(120, 256, 3)
    image = rng.randint(0, 60, (size, size, 3))
    image[mask] = colour
    return np.clip(image, 0, 255).astype("uint8")


def image_folders(folder, train=100, test=20, seed=0):
    """``folder``/train/<class>/*.png and ``folder``/test/<class>/*.png."""
    from PIL import Image

    rng = np.random.RandomState(seed)
    for split, count in (("train", train), ("test", test)):
        for kind in SHAPES:
            classes = Path(folder, split, kind)
            classes.mkdir(parents=True, exist_ok=True)
            for index in range(count):
                Image.fromarray(_shape(kind, rng)).save(str(classes / "{:04d}.png".format(index)))


def word_ids(path, train=400, test=160, length=40, vocabulary=200, seed=0):
    """Sentences as word ids in an .npz (x_train, y_train, x_test, y_test):
    padding 0, common words from 20 up, and words 2-11 or 12-19 by class."""
    rng = np.random.RandomState(seed)

    def sentences(count):
        labels = rng.randint(0, 2, count)
        x = rng.randint(20, vocabulary, (count, length))
        for row, label in enumerate(labels):
            places = rng.choice(length, 6, replace=False)
            x[row, places] = rng.randint(2, 12, 6) if label else rng.randint(12, 20, 6)
            x[row, : rng.randint(0, 10)] = 0  # padded at the front, as Keras pads
        return x.astype("int64"), labels.astype("int64")

    x_train, y_train = sentences(train)
    x_test, y_test = sentences(test)
    np.savez(str(path), x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)


def grey_images(folder, count=500, size=20, seed=0):
    """``x.npy`` (uint8, count x size x size) and ``y.npy``: four classes of
    brightness gradients running in four directions, under noise."""
    rng = np.random.RandomState(seed)
    ramp = np.linspace(0, 180, size)
    patterns = [
        np.tile(ramp, (size, 1)),
        np.tile(ramp[::-1], (size, 1)),
        np.tile(ramp[:, None], (1, size)),
        np.tile(ramp[::-1, None], (1, size)),
    ]
    y = rng.randint(0, len(patterns), count)
    x = np.stack([patterns[label] for label in y]) + rng.randint(0, 76, (count, size, size))
    Path(folder).mkdir(parents=True, exist_ok=True)
    np.save(str(Path(folder, "x.npy")), x.astype("uint8"))
    np.save(str(Path(folder, "y.npy")), y.astype("int64"))


def feature_table(path, rows=600, features=40, seed=0):
    """A CSV of ``features`` numeric columns and a ``species`` column of
    class names; each species has its own means."""
    rng = np.random.RandomState(seed)
    means = rng.normal(0, 1, (len(SPECIES), features))
    labels = rng.randint(0, len(SPECIES), rows)
    values = means[labels] + rng.normal(0, 1.5, (rows, features))
    with open(str(path), "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["f{}".format(i) for i in range(features)] + ["species"])
        for row, label in zip(values, labels):
            writer.writerow(["{:.4f}".format(v) for v in row] + [SPECIES[label]])


def write_all(folder):
    """Every example under ``folder``; returns their own_datasets entries,
    paths as given."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    image_folders(folder / "shapes")
    word_ids(folder / "sentences.npz")
    grey_images(folder / "gradients")
    feature_table(folder / "trees.csv")
    return {
        "shapes": {
            "format": "images",
            "train": str(folder / "shapes" / "train"),
            "test": str(folder / "shapes" / "test"),
            "image_size": [28, 28],
            "color_mode": "grayscale",
        },
        "sentences": {"format": "npz", "train": str(folder / "sentences.npz")},
        "gradients": {
            "format": "npy",
            "train": {
                "x": str(folder / "gradients" / "x.npy"),
                "y": str(folder / "gradients" / "y.npy"),
            },
        },
        "trees": {"format": "csv", "train": str(folder / "trees.csv"), "label": "species"},
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="where to write them")
    folder = parser.parse_args(argv).folder
    for name in write_all(folder):
        print("wrote", name)


if __name__ == "__main__":
    main()
