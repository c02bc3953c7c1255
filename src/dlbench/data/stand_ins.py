"""The offline stand-in datasets: generated raw files in the original
file formats, for the datasets the catalog says are ``like`` a real one.

No dataset can be downloaded offline or in CI, so the smoke config and the
tests run the real parsing and preparation code on these stand-ins: an npz
like Keras' mnist.npz, a CIFAR-10 binary archive, an npz like Keras'
imdb.npz and a bAbI archive; small, or at the real datasets' sizes for
speed on a machine without network (``generated_data``). Labels depend
on the inputs (a colour per class, words per sentiment, answers that follow
from the story), so the models learn and accuracy means something.
"""

import io
import tarfile

import numpy as np

from dlbench.data.raw_formats import BABI_MEMBERS, CIFAR_MEMBERS

CIFAR_CLASSES = 10


def _tar_add(tar, name, raw):
    info = tarfile.TarInfo(name)
    info.size = len(raw)
    tar.addfile(info, io.BytesIO(raw))


def cifar_binary_archive(path, per_batch=100, test=100, seed=0):
    """CIFAR-10's binary layout: five training batch files and a test file of
    records (label byte, red, green and blue 32x32 planes). Each class has
    its own mean colour under noise. Returns the labels and planes written,
    by split."""
    rng = np.random.RandomState(seed)
    colours = rng.randint(40, 216, (CIFAR_CLASSES, 3))
    written = {"train": [], "test": []}
    with tarfile.open(str(path), "w:gz") as tar:
        for split, members in CIFAR_MEMBERS.items():
            for name in members:
                count = per_batch if split == "train" else test
                labels = rng.randint(0, CIFAR_CLASSES, count).astype("uint8")
                noise = rng.randint(-40, 41, (count, 3, 32, 32))
                planes = np.clip(colours[labels][:, :, None, None] + noise, 0, 255)
                planes = planes.astype("uint8")
                raw = b"".join(
                    bytes([int(y)]) + image.tobytes() for y, image in zip(labels, planes)
                )
                _tar_add(tar, name, raw)
                written[split].append((labels, planes))
    return written


def ragged(sequences):
    """An object array of lists, as Keras stores reviews of varying length."""
    array = np.empty(len(sequences), dtype=object)
    array[:] = [list(sequence) for sequence in sequences]
    return array


def imdb_npz(path, train=500, test=200, seed=0, vocabulary=30000):
    """Keras' imdb.npz layout: ragged word-rank lists and 0/1 labels. Reviews
    draw common words at random and a few words of their sentiment: ranks
    20-59 for negative, 60-99 for positive."""
    rng = np.random.RandomState(seed)

    def reviews(count):
        labels = rng.randint(0, 2, count)
        sequences = []
        for label in labels:
            common = rng.randint(100, vocabulary, rng.randint(20, 200)).tolist()
            sentiment = (20 + 40 * label + rng.randint(0, 40, rng.randint(10, 25))).tolist()
            for word in sentiment:
                common.insert(rng.randint(0, len(common) + 1), word)
            sequences.append(common)
        return ragged(sequences), labels.astype("int64")

    x_train, y_train = reviews(train)
    x_test, y_test = reviews(test)
    np.savez(str(path), x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)


PEOPLE = ("Mary", "John", "Sandra", "Daniel")
PLACES = ("bathroom", "bedroom", "garden", "hallway", "kitchen", "office")
OBJECTS = ("football", "apple", "milk")
MOVES = ("moved to", "went to", "journeyed to", "travelled to", "went back to")
TAKES = ("got", "grabbed", "picked up", "took")
DROPS = ("dropped", "discarded", "put down", "left")


def _qa2_story(rng, questions):
    """One story of bAbI task 2 (two supporting facts): people move, pick up
    and drop objects; each question asks where an object is, answered with a
    place and the ids of the facts that tell it."""
    lines, located, moved_at, holder, taken_at = [], {}, {}, {}, {}

    def say(text):
        lines.append(text)
        return len(lines)

    asked = last_question = 0
    while asked < questions:
        person = PEOPLE[rng.randint(len(PEOPLE))]
        carrying = [o for o, p in holder.items() if p == person]
        free = [o for o in OBJECTS if o not in holder]
        action = rng.randint(3)
        if action == 0 or person not in located:
            place = PLACES[rng.randint(len(PLACES))]
            located[person] = place
            moved_at[person] = say("{} {} the {}.".format(person, MOVES[rng.randint(5)], place))
        elif action == 1 and free:
            thing = free[rng.randint(len(free))]
            holder[thing] = person
            taken_at[thing] = say(
                "{} {} the {} there.".format(person, TAKES[rng.randint(4)], thing)
            )
        elif carrying:
            thing = carrying[rng.randint(len(carrying))]
            del holder[thing]
            say("{} {} the {}.".format(person, DROPS[rng.randint(4)], thing))
        if holder and len(lines) - last_question >= 2 and rng.randint(2):
            thing = sorted(holder)[rng.randint(len(holder))]
            person = holder[thing]
            facts = sorted({taken_at[thing], moved_at[person]})
            say(
                "Where is the {}? \t{}\t{}".format(
                    thing, located[person], " ".join(str(fact) for fact in facts)
                )
            )
            asked += 1
            last_question = len(lines)
    return ["{} {}".format(number, line) for number, line in enumerate(lines, start=1)]


def babi_archive(path, train=200, test=100, seed=0, questions_per_story=5):
    """A bAbI tasks archive holding task 2 in its original layout: numbered
    lines, a story restarting at 1, questions as ``question\\tanswer\\tfacts``.
    ``train`` and ``test`` count questions."""
    rng = np.random.RandomState(seed)
    with tarfile.open(str(path), "w:gz") as tar:
        for split, count in (("train", train), ("test", test)):
            lines = []
            for _ in range(count // questions_per_story):
                lines += _qa2_story(rng, questions_per_story)
            _tar_add(tar, BABI_MEMBERS[split], "\n".join(lines).encode() + b"\n")


def mnist_npz(path, train=600, test=100, seed=0):
    """Keras' mnist.npz layout: 28x28 grey images as uint8 and their labels.
    Each class lights its own random pattern of pixels, under noise."""
    rng = np.random.RandomState(seed)
    patterns = (rng.rand(10, 28, 28) < 0.2).astype("uint8") * 180

    def images(count):
        labels = rng.randint(0, 10, count).astype("uint8")
        noise = rng.randint(0, 76, (count, 28, 28)).astype("uint8")
        return patterns[labels] + noise, labels

    x_train, y_train = images(train)
    x_test, y_test = images(test)
    np.savez(str(path), x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)


WRITERS = {
    "mnist": mnist_npz,
    "cifar10": cifar_binary_archive,
    "imdb": imdb_npz,
    "babi": babi_archive,
}


def write(dataset, path, **sizes):
    """Write the stand-in raw file of ``dataset`` (its format's name)."""
    return WRITERS[dataset](path, **sizes)
