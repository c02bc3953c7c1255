"""Fetching a dataset's raw file, verified against its checksum (runs in
the workflow's main environment).

Downloads go through pooch: retries, a progress bar, and the checksum checked
on a temporary file before it is moved into place, so a corrupted download
never leaves a file that looks complete and nothing reads unverified bytes.
A file from a local mirror is checked the same way before it is moved in.
"""

import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import pooch

DOWNLOAD_RETRIES = 3


class ChecksumError(RuntimeError):
    pass


def _check(path, known_hash, origin):
    if not pooch.hashes.hash_matches(str(path), known_hash):
        raise ChecksumError(
            "{} does not match its checksum {} (got {}): the download is corrupt "
            "or the mirror holds another file".format(
                origin,
                known_hash,
                pooch.file_hash(str(path), alg=pooch.hashes.hash_algorithm(known_hash)),
            )
        )


def fetch(source, known_hash, destination, hash_record=None):
    """Fetch ``source`` (URL or local path) to ``destination``, verified.

    Raises ``ChecksumError`` for a file that fails its checksum and
    ``FileNotFoundError`` for one that is not there; in both cases nothing
    is left at ``destination``. A file without a published checksum
    (``known_hash`` None) is checked against ``hash_record``, the SHA-256
    written there on its first download (trust on first use).
    """
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    record = Path(hash_record) if hash_record else None
    if known_hash is None and record is not None and record.is_file():
        known_hash = record.read_text().strip()
        print("no published checksum; checking against the one recorded in {}".format(record))
    if urlparse(source).scheme:
        _download(source, known_hash, destination)
    else:
        _copy(source, known_hash, destination)
    if known_hash is None:
        digest = "sha256:" + pooch.file_hash(str(destination), alg="sha256")
        if record is not None:
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(digest + "\n")
        print(
            "no published checksum for {}: recorded {} on this first download in {}; later "
            "downloads must match it".format(source, digest, record)
        )
    return destination


def _copy(source, known_hash, destination):
    if not Path(source).is_file():
        raise FileNotFoundError("data mirror has no file {}".format(source))
    fd, tmp = tempfile.mkstemp(dir=str(destination.parent), prefix=destination.name + ".")
    os.close(fd)
    try:
        shutil.copyfile(source, tmp)
        if known_hash is not None:
            _check(tmp, known_hash, source)
        os.replace(tmp, str(destination))
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _download(url, known_hash, destination):
    name = destination.name
    registry = pooch.create(
        path=str(destination.parent),
        base_url="",
        registry={name: known_hash},
        urls={name: url},
        retry_if_failed=DOWNLOAD_RETRIES,
    )
    try:
        registry.fetch(name, progressbar=True)
    except ValueError as error:  # pooch's checksum mismatch
        raise ChecksumError("{}: {}".format(url, error)) from error
    except Exception as error:
        response = getattr(error, "response", None)
        if getattr(response, "status_code", None) == 404:
            raise FileNotFoundError("{}: not found (HTTP 404)".format(url)) from error
        raise
