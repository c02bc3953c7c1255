"""Planning: the config's matrix of cells (matrix), its validation
(validation: the schema; config_rules: what the schema cannot say), the
equivalence check's and comparisons' runs (comparisons), paths and run
specs (paths, run_spec), the workflow's targets and rule inputs (targets),
what a run executes (import_graph), the machine's limits.

Imports: catalog, data (the headers of a config's own data files), environments, host,
models, record, registry."""
