"""The run record's contract: its version, columns and compared settings
(contract), its JSON Schema (run_record.schema.json, record_schema), what an
environment's own record says it holds (environment_records), the op profile's
file (op_profile: ops.json). Written by the run, read by the analysis.

Imports: nothing of dlbench's but itself."""
