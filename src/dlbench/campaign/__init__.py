"""The GPU campaign (docs/gpus.md): staged cells under a device-time budget,
in a plan's order where one is given, and the dry run's estimate of each
stage's time from earlier campaigns' records.

Imports: analysis, catalog, data, plan, record, registry."""
