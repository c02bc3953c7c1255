"""The run record's contract, beside its schema (run_record.schema.json):
the version the harness writes, the columns of a run's epochs file, the
hidden settings every run records and the tables compare, and the reading
of records of an older version. Written in the backend's environment (the
harness imports this: Python 3.6, no jsonschema) and read in the workflow's.

Version 3 added the run's manifest of hidden settings (``settings.manifest``).
A version 2 record is read as version 3 by ``read``, which says what it
assumed (``read_as``): version 2 records of the first campaigns lack the
dimensions added after them (precision, compile, versions), which were
then float32, Keras' auto compile choice and the env files' pinned
versions, and every version 2 record lacks the manifest, whose settings the
tables show as not recorded. Nothing else fills in a missing field.
"""

RECORD_VERSION = 3
READABLE_VERSIONS = (2, 3)

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

# What version 2 records that lack a later dimension ran with.
VERSION_2_DIMENSIONS = {"precision": "float32", "compile": "auto", "versions": "pinned"}


def read(record):
    """``record`` as the current version: itself when it is one; a version 2
    record with the dimensions it predates at the values it ran with, and
    ``read_as`` saying so; anything else unchanged (the schema refuses it)."""
    if not isinstance(record, dict) or record.get("record_version") != 2:
        return record
    found = dict(record, record_version=RECORD_VERSION)
    assumed = []
    for name, value in VERSION_2_DIMENSIONS.items():
        if name not in found:
            found[name] = value
            assumed.append("{} {}".format(name, value))
    found["read_as"] = "version 2{}; no manifest of hidden settings".format(
        ", predating the dimensions it ran at: " + ", ".join(assumed) if assumed else ""
    )
    return found
