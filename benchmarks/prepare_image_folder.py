"""Prepare a generated image folder of a realistic size as a dataset of your
own: the time and peak memory of its preparation against its size on disk,
and what planning pays to list it.

Writes ``--images`` JPEG (or PNG) images of ``--size`` x ``--size`` RGB in
``--classes`` class folders under a scratch folder, then, each in a process
of its own: the planning probe (the folder listed, no image read) and the
preparation (every image decoded into the prepared .npz). The peak resident
memory of a process that only imports what the preparation imports is
printed beside it, and so is the prepared float32 array's size: what the
preparation would hold if it loaded the folder whole.

    .venv/bin/python benchmarks/prepare_image_folder.py [--images 20000] [--size 64] [--keep DIR]

``--keep DIR`` writes the images under DIR and leaves them there (to time a
dry run of a config that names them, say).
"""

import argparse
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import json, resource, sys, time
sys.path.insert(0, {src!r})
started = time.monotonic()
from dlbench.data import own_datasets, own_preparation
import numpy, PIL.Image
entry = json.loads({entry!r})
imported = time.monotonic()
if {step!r} == "probe":
    found = own_datasets.probe("photos", entry)
    print(len(found.files), "files listed")
elif {step!r} == "prepare":
    own_preparation.prepare("photos", entry, {output!r}, log=lambda line: None)
done = time.monotonic()
print(json.dumps({{"seconds": done - imported, "import_seconds": imported - started}}))
"""


def cpu_model():
    """The CPU's model name, family and model (/proc/cpuinfo)."""
    fields = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        name, _, value = line.partition(":")
        fields.setdefault(name.strip(), value.strip())
    return "{}, family {} model {}".format(
        fields.get("model name", platform.processor()),
        fields.get("cpu family"),
        fields.get("model"),
    )


def write_images(folder, images, size, classes, suffix, seed=0):
    from PIL import Image

    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[:size, :size]
    for index in range(images):
        label = index % classes
        # a smooth picture with detail (a photo compresses so; noise would not)
        phase = rng.uniform(0, 6.3, 3)
        image = np.stack(
            [np.sin(xx / (3 + label + c) + phase[c]) * np.cos(yy / (5 + c)) for c in range(3)], -1
        )
        image = (127.5 + 100 * image + rng.normal(0, 12, image.shape)).clip(0, 255)
        path = folder / "class{:02d}".format(label) / "{:06d}{}".format(index, suffix)
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image.astype("uint8")).save(str(path), quality=90)


def folder_bytes(folder):
    return sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())


def child(step, entry, output):
    """(seconds, peak resident MB) of one step in a process of its own."""
    import json

    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    code = CHILD.format(src=str(REPO / "src"), entry=json.dumps(entry), step=step, output=output)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    timing = json.loads(done.stdout.strip().splitlines()[-1])
    # ru_maxrss of the children is the largest one's: a later, smaller child leaves it as it was
    return timing["seconds"], peak / 1024.0, before / 1024.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=20000)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--format", choices=["jpg", "png"], default="jpg")
    parser.add_argument("--keep", help="write the images here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep) if args.keep else Path(scratch) / "photos"
        started = time.monotonic()
        write_images(folder, args.images, args.size, args.classes, "." + args.format)
        written = time.monotonic() - started
        entry = {
            "format": "images",
            "train": str(folder),
            "image_size": [args.size, args.size],
            "color_mode": "rgb",
        }
        output = str(Path(scratch) / "photos.npz")
        # the import alone first: its peak is the floor the others are read against
        _, floor, _ = child("import", entry, output)
        probe_seconds, _, _ = child("probe", entry, output)
        prepare_seconds, peak, _ = child("prepare", entry, output)
        on_disk = folder_bytes(folder) / 1e6
        prepared = Path(output).stat().st_size / 1e6
        whole = args.images * args.size * args.size * 3 * 4 / 1e6
        print("CPU: {} ({} cores)".format(cpu_model(), len(__import__("os").sched_getaffinity(0))))
        print(
            "{} {} images of {}x{} RGB in {} class folders, written in {:.0f} s".format(
                args.images, args.format.upper(), args.size, args.size, args.classes, written
            )
        )
        print("size on disk:                {:8.1f} MB".format(on_disk))
        print("prepared file (float32):     {:8.1f} MB".format(prepared))
        print("planning probe (listing):    {:8.2f} s".format(probe_seconds))
        print(
            "preparation:                 {:8.1f} s ({:.0f} images a second)".format(
                prepare_seconds, args.images / prepare_seconds
            )
        )
        print("peak memory, preparation:    {:8.0f} MB".format(peak))
        print("peak memory, imports alone:  {:8.0f} MB".format(floor))
        print("the array whole, in memory:  {:8.0f} MB".format(whole))


if __name__ == "__main__":
    main()
