"""Results of other machines, brought in: every run record of a folder or a
``snakemake pack`` archive is checked before it is used, and a bad one is
refused with its path and the reason. Nothing read is ever written to."""

import datetime
import json
import math
import tarfile
from pathlib import Path

from dlbench.plan import matrix
from dlbench.record import contract, record_schema

READABLE_RECORD_VERSIONS = contract.READABLE_VERSIONS


def _folder_records(folder):
    for path in sorted(folder.rglob("run.json")):
        yield str(path), path.read_bytes


def _archive_records(archive):
    with tarfile.open(archive, "r:*") as packed:
        for member in sorted(packed.getmembers(), key=lambda m: m.name):
            if member.isfile() and Path(member.name).name == "run.json":
                yield "{}:{}".format(archive, member.name), packed.extractfile(member).read


def records_in(source):
    """(where, read) of every run record under ``source``: a folder, or a
    .tar.gz archive made by `snakemake pack`."""
    source = Path(source)
    if source.is_dir():
        yield from _folder_records(source)
    elif source.is_file() and tarfile.is_tarfile(source):
        yield from _archive_records(source)
    elif source.exists():
        raise ValueError("{}: neither a results folder nor a .tar.gz archive".format(source))
    else:
        raise FileNotFoundError("{}: no such results folder or archive".format(source))


def problem(record, local_machine):
    """Why a record cannot be used, or None."""
    if not isinstance(record, dict):
        return "not a run record (a JSON {})".format(type(record).__name__)
    version = record.get("record_version", 1)
    if version not in READABLE_RECORD_VERSIONS:
        return "record_version {} is not one this code reads ({})".format(
            version, ", ".join(map(str, READABLE_RECORD_VERSIONS))
        )
    found = record_schema.problems(contract.read(record))
    if found:
        return "not a valid run record: {}".format("; ".join(found[:3]))
    unmeasurable = not_a_measurement(record)
    if unmeasurable:
        return unmeasurable
    if record["machine"] == local_machine:
        return (
            "its machine {!r} is this machine's name: its cells would collide with this "
            "machine's own runs (give one of the machines another `machine:`)".format(
                record["machine"]
            )
        )
    return None


MEASURED = (
    "first_epoch_seconds",
    "steady_epoch_seconds",
    "samples_per_second",
    "seconds_per_1000_samples",
    "test_loss",
    "test_accuracy",
)


def not_a_measurement(record):
    """Why a record's numbers cannot have been measured (NaN or infinite
    times, losses or rates; a steady epoch longer than the whole run), or
    None."""
    found = [(key, record.get(key)) for key in MEASURED]
    found += [
        ("latency_ms." + key, value) for key, value in (record.get("latency_ms") or {}).items()
    ]
    for index, epoch in enumerate(record.get("epochs") or []):
        found += [
            ("epochs[{}].{}".format(index, key), epoch.get(key))
            for key in ("seconds", "loss", "accuracy")
        ]
    for key, value in found:
        if isinstance(value, float) and not math.isfinite(value):
            return "{} is {}: not a measurement".format(key, value)
    steady, started, finished = (
        record.get(key) for key in ("steady_epoch_seconds", "started", "finished")
    )
    if steady is not None and started and finished:
        whole = run_seconds(record)
        if steady > whole + 1:  # the record's times are whole seconds
            return "steady_epoch_seconds {:.4g} is longer than the whole run ({:.0f} s)".format(
                steady, whole
            )
    return None


def _time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def run_seconds(record):
    """The whole run's seconds, from its start to its record (whole seconds)."""
    return (_time(record["finished"]) - _time(record["started"])).total_seconds()


def run_key(record):
    return tuple(str(value) for value in matrix.record_cell(contract.read(record)).values())


def import_records(sources, local_machine):
    """The usable records of every source, and one verdict per record found
    (where, machine, accepted, reason). A run found twice is used once."""
    accepted, verdicts, seen = [], [], {}
    for source in sources:
        for where, read in records_in(source):
            try:
                record = json.loads(read())
            except (ValueError, UnicodeDecodeError) as error:
                record, reason = None, "does not parse as JSON ({})".format(error)
            else:
                reason = problem(record, local_machine)
            if reason is None and run_key(record) in seen:
                reason = "the same run (machine, cell, repeat) as {}".format(seen[run_key(record)])
            machine = record.get("machine") if isinstance(record, dict) else None
            verdicts.append(
                {"record": where, "machine": machine, "accepted": reason is None, "reason": reason}
            )
            if reason is None:
                seen[run_key(record)] = where
                # as the current version, as this machine's own records are read
                accepted.append(contract.read(record))
    return accepted, verdicts
