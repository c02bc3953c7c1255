"""The order of a GPU campaign's stages: the generic order (``stages``) or
a campaign file's (``campaign_file_stages``), each stage's Snakemake targets,
without the runs and probes that earlier campaigns' packs already hold."""

import json
import tarfile

from dlbench.campaign.config_files import planned_runs, read_config, runs_of
from dlbench.plan import paths


def in_default_mode(run, planned):
    """Eager where the backend has both modes (its compiled cell costs a
    compile per run: torch.compile takes most of a minute), compiled where
    compiling is all it does (JAX)."""
    return run.compile == "eager" or run._replace(compile="eager") not in planned


def recorded_elsewhere(packs):
    """The run records (paths) that earlier campaigns' results.tar.gz hold
    with status ok, and the GPU probes they measured: a fresh machine need
    not run them again. A record is placed by its own cell (a pack written
    before a dimension existed has paths without it)."""
    from dlbench.plan import matrix
    from dlbench.record import contract

    found = set()
    for path in packs or []:
        with tarfile.open(path) as tar:
            for member in tar.getmembers():
                if paths.is_gpu_probe(member.name):
                    found.add(member.name)
                if not member.name.endswith("/run.json"):
                    continue
                record = contract.read(json.load(tar.extractfile(member)))
                if record.get("status") != "ok":
                    continue
                cell = matrix.record_cell(record)
                if any(cell[key] is None for key in matrix.Run._fields):
                    found.add(member.name)  # not a whole record: kept where it was
                else:
                    found.add(paths.run_dir(matrix.Run(**cell)) + "/run.json")
    return found


def gpu_probes(runs, precisions, done):
    """The GPU's matrix-product probe of each of ``precisions`` (the peak
    that MFU divides by), where ``runs`` hold a GPU run and ``done`` not the probe."""
    if not any(int(run.devices) > 0 for run, _ in runs):
        return []
    machine = runs[0][0].machine
    probes = [paths.gpu_probe(machine, p) for p in precisions]
    return [probe for probe in probes if probe not in done]


def closing_stages(done):
    """The stages that need every record here (tables, plots, the pack,
    the report): none where earlier campaigns' packs hold some of them."""
    if done:
        return []
    return [("tables and plots", ["all", "pack"]), ("report", ["--report", paths.REPORT])]


def stages(configfiles, done=frozenset()):
    """(name, targets), the cheapest and most wanted first: the GPU's
    matrix-product probes (MFU's peak), the GPU runs in float32 in each
    backend's default mode, the same on the CPU (CPU against GPU), the GPU
    in bfloat16, the GPU in the other mode, the other CPU runs; then
    everything else (tables, plots, the equivalence check, this machine's
    pack for import_results elsewhere) and the report. Runs in ``done``
    (recorded by an earlier campaign) are left out, and with them the
    stages that need every record here (tables and report: made where
    the packs are imported)."""
    every = planned_runs(configfiles)
    planned = {run for run, _ in every}
    runs = [(run, path) for run, path in every if path not in done]

    def pick(on_gpus, default=None, float32=None):
        return [
            path
            for run, path in runs
            if (int(run.devices) > 0) == on_gpus
            and (default is None or in_default_mode(run, planned) == default)
            and (float32 is None or (run.precision == "float32") == float32)
        ]

    cpu_first = pick(False, default=True, float32=True)
    probes = []
    if pick(True):
        precisions = sorted({run.precision for run, _ in every})
        probes = gpu_probes(every, precisions, done)
    named = [
        ("gpu probes", probes),
        ("gpu runs, float32", pick(True, default=True, float32=True)),
        ("cpu runs, float32", cpu_first),
        ("gpu runs, reduced precision", pick(True, default=True, float32=False)),
        ("gpu runs, other compile mode", pick(True, default=False)),
        ("cpu runs, the rest", [path for path in pick(False) if path not in cpu_first]),
    ]
    return named + closing_stages(done)


def read_campaign_file(path):
    """A campaign file (config/campaigns/): its config files and stages,
    checked against workflow/schemas/campaign.schema.yaml."""
    import jsonschema
    import yaml

    with open(path) as handle:
        campaign = yaml.safe_load(handle)
    with open("workflow/schemas/campaign.schema.yaml") as handle:
        schema = yaml.safe_load(handle)
    try:
        jsonschema.validate(campaign, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(part) for part in error.absolute_path)
        raise SystemExit("{}: {} (at {})".format(path, error.message, where or "the top")) from None
    return campaign


def _selects(item, run, stand_in):
    from dlbench.plan import matrix

    named = {key: stand_in(value) if key == "dataset" else value for key, value in item.items()}
    return matrix.has_values(run._asdict(), named)


def campaign_file_stages(configfiles, selections, done=frozenset()):
    """(name, targets) of a campaign file's stages, in its order: each runs the
    planned runs that match one of its ``select`` items and no earlier
    stage's, each preceded by the GPU probes of the precisions it is first
    to run in; runs that no stage selects go in a last stage of their own,
    before the tables and the report (as in ``stages``). A ``select`` item
    that matches no planned run is refused, as the config's ``exclude`` is."""
    from dlbench.registry import BUILT_IN

    config = read_config(configfiles)
    stand_in = BUILT_IN.generated_stand_in if config.get("generated_data") else str
    every = runs_of(config)
    for stage in selections:
        for item in stage["select"]:
            if not any(_selects(item, run, stand_in) for run, _ in every):
                raise SystemExit(
                    "the stage {!r} selects {}: no planned run has these values".format(
                        stage["name"], item
                    )
                )
    left = [(run, path) for run, path in every if path not in done]
    probed = set()
    named = []
    for stage in selections + [{"name": "the runs no stage selects", "select": [{}]}]:
        chosen = [
            (run, path)
            for run, path in left
            if any(_selects(i, run, stand_in) for i in stage["select"])
        ]
        left = [pair for pair in left if pair not in chosen]
        precisions = sorted({run.precision for run, _ in chosen if int(run.devices) > 0} - probed)
        probed.update(precisions)
        probes = gpu_probes(every, precisions, done)
        if probes:
            named.append(("gpu probes, " + ", ".join(precisions), probes))
        named.append((stage["name"], [path for _, path in chosen]))
    return named + closing_stages(done)


def campaign_stages(args, configfiles, done=frozenset()):
    """The campaign file's stages (``--campaign``), else the generic order of ``stages``."""
    if args.campaign:
        return campaign_file_stages(configfiles, read_campaign_file(args.campaign)["stages"], done)
    return stages(configfiles, done)
