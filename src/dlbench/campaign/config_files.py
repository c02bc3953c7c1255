"""The GPU campaign's config: the overlay that points every backend at the
prepared interpreter, the config files read as the workflow reads them, and
the runs they plan."""

from pathlib import Path

from dlbench.plan import config_rules, paths

CONFIG = "config/gpu.yaml"


def campaign_config(args, env_python):
    """The overlay on the campaign's configs: every backend in the prepared
    interpreter, the device counts asked for."""
    import yaml

    backends = {}
    for config in args.config:  # later files override earlier ones, as in Snakemake
        with open(config) as handle:
            backends = yaml.safe_load(handle).get("backends", backends)
    overlay = {
        "env_mode": "existing",
        "existing_environments": {backend: env_python for backend in backends},
    }
    if args.devices is not None:
        overlay["devices"] = args.devices
    path = Path(args.env) / "campaign.yaml"
    path.write_text(yaml.safe_dump(overlay))
    return [*args.config, str(path)]


def read_config(configfiles):
    """The config as the workflow reads it: the files merged, later ones
    overriding earlier ones, validated and normalised."""
    import yaml
    from snakemake.utils import validate

    config = {}
    for path in configfiles:
        with open(path) as handle:
            config.update(yaml.safe_load(handle))
    validate(config, "workflow/schemas/config.schema.yaml")
    config_rules.validate(config)
    return config


def runs_of(config):
    """(run, its record's path) of every run ``config`` (read_config's) plans."""
    from dlbench.plan import matrix

    return [(run, paths.run_dir(run) + "/run.json") for run in matrix.runs(config)]


def planned_runs(configfiles):
    """The run records the config plans (as the workflow reads it)."""
    return runs_of(read_config(configfiles))
