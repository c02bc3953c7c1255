"""The GPU campaign (docs/gpus.md): staged cells under a device-time budget,
in a campaign file's order where one is given, and the dry run's estimate of each
stage's time from earlier campaigns' records.

The command (gpu_campaign) and its parts: the interpreter it prepares
(interpreter), its config files and planned runs (config_files), the order
of its stages (stage_order), the GPUs it has (gpus), a stage run under the
deadline (stage_runner), the pack it takes home (packing), the whole run
inside the interpreter (campaign_run), the dry run (dry_run) and its
estimates (estimate); progress lines (progress).

Imports: analysis, catalog, data, plan, record, registry."""
