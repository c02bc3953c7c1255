"""A raw file that could not be fetched: the reason written in its place
(the dataset's cells say it, the rest of the workflow goes on), and
discarding it with what was made from it so that the download is tried
again (retry_downloads)."""

import json
import os
import sys
import zipfile
from pathlib import Path

from dlbench.catalog import NO_DATA_REASON, UNAVAILABLE_DATA
from dlbench.data.downloads import ChecksumError, fetch

# What a raw file holds in place of its data when it could not be fetched,
# then the reason: the dataset's cells become unavailable, the rest of the
# workflow goes on, and retry_downloads tries the download again.
UNFETCHED = b"dlbench: this file could not be fetched\n"


def fetch_or_say_why(source, known_hash, destination, hash_record=None):
    """``fetch``; where the file cannot be had (no network, no such file,
    a checksum that does not match) the reason written at ``destination``
    instead (``unfetched_reason`` reads it), and returned."""
    try:
        fetch(source, known_hash, destination, hash_record=hash_record)
        return None
    except (OSError, ValueError, ChecksumError) as error:  # requests' errors are OSErrors
        reason = "{}: {}: {}".format(source, type(error).__name__, error)
    Path(destination).write_bytes(UNFETCHED + reason.encode())
    print("could not fetch {}".format(reason))
    return reason


def unfetched_reason(path):
    """Why the raw file at ``path`` could not be fetched, or None for data."""
    with open(str(path), "rb") as handle:
        head = handle.read(len(UNFETCHED))
        if head != UNFETCHED:
            return None
        return handle.read().decode(errors="replace")


def holds_no_data(path):
    """Whether ``path`` is a raw file that could not be fetched or a
    prepared file made from one (the reason in place of the data)."""
    if unfetched_reason(path) is not None:
        return True
    if not str(path).endswith(".npz"):
        return False
    try:
        with zipfile.ZipFile(str(path)) as archive:
            return UNAVAILABLE_DATA + ".npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False  # not this module's to judge: the seals catch a damaged file


def records_without_data(folders, dataset):
    """The run records under ``folders`` (this machine's runs and checks)
    that say ``dataset``'s data could not be had: each one discarded makes
    Snakemake ask for the dataset again, and every job made from its reason
    (weights, checks, counts, the other runs) is made again after it.
    A file that cannot be read, or is not a record, is kept and named on
    stderr with the error: whether it carries the reason is not known."""
    found = []
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.json")):
            try:
                record = json.loads(path.read_text())
            except (OSError, ValueError) as error:
                _unread(path, dataset, "{}: {}".format(type(error).__name__, error))
                continue
            if not isinstance(record, dict):
                _unread(path, dataset, "a JSON {}, not a record".format(type(record).__name__))
                continue
            if record.get("status") == "unavailable" and str(record.get("reason")).startswith(
                NO_DATA_REASON.format(dataset)
            ):
                found.append(str(path))
    return found


def _unread(path, dataset, error):
    print(
        "not read, kept: {} ({}); if it says {}'s data could not be had, delete it for the "
        "download to be tried again".format(path, error, dataset),
        file=sys.stderr,
    )


def discard_unfetched(files, record_folders=lambda dataset: []):
    """Delete each of ``files`` ({path: dataset}) that holds the reason a
    download failed instead of data (a raw file, or the prepared file made
    from it), its seal, and the records in ``record_folders(dataset)`` that
    carry the reason, so that the workflow tries the download again: outputs
    left in place would keep Snakemake from asking for the data. Returns the
    files discarded."""
    discarded = []
    for path, dataset in files.items():
        if not (os.path.isfile(str(path)) and holds_no_data(path)):
            continue
        discarded.append(str(path))
        for made in [str(path), str(path) + ".sha256"] + records_without_data(
            record_folders(dataset), dataset
        ):
            if os.path.exists(made):
                os.remove(made)
    return discarded
