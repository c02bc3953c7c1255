"""The run record's contract, beside its schema (run_record.schema.json):
the version the harness writes, the columns of a run's epochs file, the
hidden settings every run records and the tables compare, and the reading
of records of an older version. Written in the backend's environment (the
harness imports this: Python 3.6, no jsonschema) and read in the workflow's.

Version 3 added the run's manifest of hidden settings (``settings.manifest``);
version 4 renamed the block of what the run found in effect (Python, host,
CPU, threads, GPUs, framework versions, the matmul probe) from
``environment``, which names only a Python environment, to ``runtime``.
Records of versions 2 and 3 are read as version 4 by ``read``, which says
what it assumed (``read_as``): their ``environment`` block is moved to
``runtime``; version 2 records of the first campaigns also lack the
dimensions added after them (precision, compile, versions), which were
then float32, Keras' auto compile choice and the env files' pinned
versions, and every version 2 record lacks the manifest, whose settings the
tables show as not recorded. Nothing else fills in a missing field.
"""

from typing import Any, Dict

# A run's record (run_record.schema.json), or a part of one, as JSON gives it.
Record = Dict[str, Any]
# A JSON Schema, or one node of one (the record's, a figure's, the config's).
Schema = Dict[str, Any]

RECORD_VERSION = 4
READABLE_VERSIONS = (2, 3, 4)

EPOCH_COLUMNS = (
    "epoch",
    "seconds",
    "wall_seconds",
    "loss",
    "accuracy",
    "val_loss",
    "val_accuracy",
)

# The manifest's settings whose differing values make two runs unlike
# (dlbench.run.manifest writes them, dlbench.analysis.hidden_settings compares
# them); the manifest's other settings describe each framework's own way.
COMPARED_SETTINGS = (
    "float32_matmul",
    "float32_convolution",
    "float32_observed",
    "cudnn_autotune",
    "deterministic",
    "intra_op_threads",
    "inter_op_threads",
    "onednn_fpmath_mode",
    "denormals",
)
NOT_RECORDED = "not recorded"

# A manifest setting that has no value on a run says why, in text that
# starts with one of these: the setting does not apply there (``n/a (CPU)``),
# or reading it back raised (``not read (AttributeError: ...)``). Such a value
# is no setting to compare with another run's.
NOT_APPLICABLE_PREFIX = "n/a"
NOT_READ_PREFIX = "not read"


def not_applicable(reason):
    # type: (str) -> str
    """A manifest setting that does not apply to the run, and why."""
    return "{} ({})".format(NOT_APPLICABLE_PREFIX, reason)


def not_read(error):
    # type: (BaseException) -> str
    """A manifest setting whose read-back raised ``error``."""
    return "{} ({}: {})".format(NOT_READ_PREFIX, type(error).__name__, error)


def is_setting(value):
    # type: (Any) -> bool
    """Whether a manifest value is a setting, not the reason for lacking one."""
    return not (
        isinstance(value, str) and value.startswith((NOT_APPLICABLE_PREFIX, NOT_READ_PREFIX))
    )


# What version 2 records that lack a later dimension ran with.
VERSION_2_DIMENSIONS = {"precision": "float32", "compile": "auto", "versions": "pinned"}

# The block of what the run found in effect: its name before version 4, and since.
OLD_RUNTIME, RUNTIME = "environment", "runtime"
RUNTIME_MOVED = "its {} block read as {}".format(OLD_RUNTIME, RUNTIME)


def read(record: Record) -> Record:
    """``record`` as the current version: itself when it is one; a version 2
    or 3 record with its ``environment`` block moved to ``runtime`` and, for
    version 2, the dimensions it predates at the values it ran with, and
    ``read_as`` saying so; anything else unchanged (the schema refuses it)."""
    if not isinstance(record, dict) or record.get("record_version") not in (2, 3):
        return record
    version = record["record_version"]
    # the same order of fields, the block under its new name
    found = {(RUNTIME if name == OLD_RUNTIME else name): v for name, v in record.items()}
    found["record_version"] = RECORD_VERSION
    said = ["version {}".format(version)]
    if version == 2:
        assumed = []
        for name, value in VERSION_2_DIMENSIONS.items():
            if name not in found:
                found[name] = value
                assumed.append("{} {}".format(name, value))
        if assumed:
            said[0] += ", predating the dimensions it ran at: " + ", ".join(assumed)
        said.append("no manifest of hidden settings")
    if OLD_RUNTIME in record:
        said.append(RUNTIME_MOVED)
    found["read_as"] = "; ".join(said)
    return found
