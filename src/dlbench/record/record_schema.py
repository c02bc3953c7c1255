"""The run record's contract: its JSON Schema, checked where records are read
(collect, import) and, in the tests, where they are written. The record's
structure is ``run_record.schema.json`` (one version per
``contract.RECORD_VERSION``; older versions are read as the current one by
``contract.read``); its statuses and measured figures come from
``fields``, where they are defined once. Main environment only: it needs
jsonschema, which backend environments lack."""

import functools
import json
from pathlib import Path
from typing import Any, List, Optional

from dlbench.record import fields
from dlbench.record.contract import Record, Schema

SCHEMA_PATH = Path(__file__).with_name("run_record.schema.json")


def schema() -> Schema:
    """The record's whole schema: the file's structure with the statuses and
    every measured figure's schema from ``fields``."""
    found = json.loads(SCHEMA_PATH.read_text())
    fields.record_schema_properties(found["properties"])
    found["properties"]["status"] = fields.status_schema()
    return found


@functools.lru_cache(maxsize=None)
def validator() -> Any:  # a jsonschema validator of the schema's draft
    import jsonschema

    schema_of_records = schema()
    checker = jsonschema.validators.validator_for(schema_of_records)
    checker.check_schema(schema_of_records)
    return checker(schema_of_records)


def problems(record: Record) -> List[str]:
    """Every way ``record`` departs from the schema, as ``field: message``
    (``(record)`` for the record as a whole); empty when it conforms."""
    found = sorted(
        validator().iter_errors(record), key=lambda error: [str(p) for p in error.absolute_path]
    )
    return [
        "{}: {}".format(".".join(map(str, error.absolute_path)) or "(record)", error.message)
        for error in found
    ]


def version(record: Any) -> Optional[int]:
    return record.get("record_version", 1) if isinstance(record, dict) else None
