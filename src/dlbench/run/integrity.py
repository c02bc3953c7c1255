"""Data files are checked, never trusted: a downloaded, generated or prepared
file gets a seal (``<file>.sha256``: its SHA-256, size and modification time)
from the rule that made it.

- Before any job starts, the workflow hashes every data file of the config
  and discards those that no longer match their seal (``discard_if_corrupt``;
  about a second per GB), so that Snakemake makes them again.
- The harness hashes the prepared file again before it loads it
  (``verify``): a file changed while the workflow runs is refused.

Importable on Python 3.6 (the harness runs in every backend environment).
"""

import hashlib
import json
import os

SEAL_SUFFIX = ".sha256"


class CorruptData(RuntimeError):
    """A data file that does not match its seal."""


def sha256(path, chunk=1 << 20):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def seal_path(path):
    return str(path) + SEAL_SUFFIX


def seal(path):
    """Record what ``path`` is now. Written by the rule that made it."""
    stat = os.stat(str(path))
    payload = {"sha256": sha256(path), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    tmp = seal_path(path) + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(payload, handle)
    os.replace(tmp, seal_path(path))
    return payload


def _read_seal(path):
    try:
        with open(seal_path(path)) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def check(path, full=True):
    """Why ``path`` does not match its seal, or None when it does. Without
    ``full``, an unchanged size and modification time is taken as a match."""
    sealed = _read_seal(path)
    if sealed is None:
        return "{} has no readable seal ({})".format(path, seal_path(path))
    stat = os.stat(str(path))
    if stat.st_size != sealed["size"]:
        return "{} is {} bytes; it was {} when made".format(path, stat.st_size, sealed["size"])
    if not full and stat.st_mtime_ns == sealed["mtime_ns"]:
        return None
    found = sha256(path)
    if found != sealed["sha256"]:
        return "{} has SHA-256 {}; it was {} when made".format(path, found, sealed["sha256"])
    return None


def verify(path):
    """Raise ``CorruptData`` unless ``path`` matches its seal in full."""
    reason = check(path, full=True)
    if reason is not None:
        raise CorruptData(
            "refusing to load corrupted data: {}. Run the workflow again: it discards the "
            "file and makes it anew".format(reason)
        )


def discard_if_corrupt(paths, full=True):
    """Delete every existing file of ``paths`` that fails its seal (and the
    seal), so that the workflow makes it again. Returns what was discarded,
    with the reason."""
    discarded = []
    for path in paths:
        if not os.path.exists(str(path)):
            continue
        reason = check(path, full=full)
        if reason is not None:
            os.remove(str(path))
            if os.path.exists(seal_path(path)):
                os.remove(seal_path(path))
            discarded.append(reason)
    return discarded
