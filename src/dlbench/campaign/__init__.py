"""The GPU campaign (docs/gpus.md): staged cells under a device-time budget.

Imports: plan, record."""
