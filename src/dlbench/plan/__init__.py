"""Planning: the config's matrix of cells, its validation, paths and run
specs (matrix, validation), the workflow's targets and rule inputs
(targets), what a run executes (import_graph), the machine's limits.

Imports: catalog, environments, host, models."""
