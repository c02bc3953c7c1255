"""The run record's contract: its JSON Schema (``run_record.schema.json``,
one version per ``contract.RECORD_VERSION``; older versions are read as
the current one by ``contract.read``), checked where records are read
(collect, import) and, in the tests, where they are written. Main
environment only: it needs jsonschema, which backend environments lack."""

import functools
import json
from pathlib import Path

SCHEMA_PATH = Path(__file__).with_name("run_record.schema.json")
INVALID = "invalid"


@functools.lru_cache(maxsize=None)
def validator():
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text())
    checker = jsonschema.validators.validator_for(schema)
    checker.check_schema(schema)
    return checker(schema)


def problems(record):
    """Every way ``record`` departs from the schema, as ``field: message``
    (``(record)`` for the record as a whole); empty when it conforms."""
    found = sorted(
        validator().iter_errors(record), key=lambda error: [str(p) for p in error.absolute_path]
    )
    return [
        "{}: {}".format(".".join(map(str, error.absolute_path)) or "(record)", error.message)
        for error in found
    ]


def version(record):
    return record.get("record_version", 1) if isinstance(record, dict) else None
