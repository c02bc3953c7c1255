"""The GPU campaign: config/gpu.yaml run on a GPU machine that has no network,
inside a time budget, its records packed to take home (docs/gpus.md).

Make the kit where pip reaches PyPI (``make gpu-kit``), copy the project and
its ``.gpu-kit`` to the GPU machine, and there, from the project's root::

    PYTHONPATH=src python3 -m dlbench.campaign.gpu_campaign --out gpu-results

1. An interpreter for every step: a venv of the machine's ``python3`` whose
   path reaches that interpreter's own packages (its CUDA frameworks) after
   the kit's wheels, installed with ``pip --no-index --no-deps --target``; the
   kit's requirements are checked against what the machine holds.
2. The config: ``config/gpu.yaml`` with every backend pointed at that
   interpreter (existing environments).
3. Snakemake in stages, the GPU runs first, then the CPU runs, then the
   tables and the report (or a plan's stages, ``--plan``), each stage as
   long as the budget allows. At the budget's end Snakemake is interrupted,
   which removes the outputs of the jobs it cut off; the same command again
   resumes where it stopped.
4. The records, tables, plots, logs and the report packed into ``--out``
   (results.tar.gz, campaign.json), to copy back; the logs are left out where
   the archive would exceed ``--archive-limit-mib``.

The first part runs in the machine's interpreter with the standard library
alone; the rest in the prepared interpreter (``--inside``). ``--dry-run``
prints the stages and how long each should take, from earlier campaigns'
records, and runs nothing::

    .venv/bin/python -m dlbench.campaign.gpu_campaign --plan PLAN --dry-run --budget-seconds 540
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from dlbench.plan import config_rules, paths

KIT_DIR = ".gpu-kit"
ENV_DIR = ".gpu-env"
CONFIG = "config/gpu.yaml"
# The records of earlier campaigns on an H200 that the project keeps.
ESTIMATE_FROM = "tests/fixtures/gpu/runs"
# What the packed results hold: records, epoch logs, tables, plots, logs and
# the report; never data or weights.
PACKED_SUFFIXES = (".json", ".csv", ".md", ".png", ".svg", ".html", ".log", ".txt", ".sha256")
INTERRUPT_GRACE_SECONDS = 60


def say(message):
    print("[gpu campaign {}] {}".format(time.strftime("%H:%M:%S"), message), flush=True)


# -- 1. the interpreter (the machine's python3, standard library only) ----------


SITE_HOOK = "import site; site.addsitedir({!r})\n"


def image_site_dirs(python):
    out = subprocess.check_output(
        [python, "-c", "import json, site; print(json.dumps(site.getsitepackages()))"]
    )
    return [path for path in json.loads(out.decode()) if os.path.isdir(path)]


def prepare_interpreter(kit, python, env_dir):
    """The venv at ``env_dir``: the kit's wheels, then the machine's own
    packages (their .pth files processed, as in their own interpreter).
    Made again only when the kit or the interpreter changed."""
    kit, env_dir = Path(kit), Path(env_dir)
    if not (kit / "kit.json").exists():
        raise SystemExit(
            "no GPU kit in {}: run `make gpu-kit` where pip reaches PyPI, and copy {} to "
            "the GPU machine beside the project".format(kit, kit)
        )
    wheels = sorted(str(path) for path in kit.glob("*.whl"))
    identity = {"python": python, "wheels": [os.path.basename(w) for w in wheels]}
    ready = env_dir / "ready.json"
    env_python = env_dir / "bin" / "python"
    if ready.exists() and json.loads(ready.read_text()) == identity:
        say("interpreter ready: {}".format(env_python))
        return str(env_python)
    started = time.time()
    shutil.rmtree(str(env_dir), ignore_errors=True)
    subprocess.check_call([python, "-m", "venv", "--without-pip", str(env_dir)])
    site_dir = subprocess.check_output(
        [str(env_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    )
    site_dir = Path(site_dir.decode().strip())
    hooks = "".join(SITE_HOOK.format(path) for path in image_site_dirs(python))
    (site_dir / "zz-machine-packages.pth").write_text(hooks)
    # bytecode is compiled as the workflow imports it: most of the kit's
    # files (pulp's solvers, Snakemake's executors) are never imported
    install = [python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile"]
    subprocess.check_call(install + ["--target", str(site_dir)] + wheels)
    ready.write_text(json.dumps(identity))
    say(
        "interpreter {} prepared in {:.0f} s: {} wheels of the kit, then {}'s packages".format(
            env_python, time.time() - started, len(wheels), python
        )
    )
    return str(env_python)


def outer(args):
    started = time.time()
    env_python = prepare_interpreter(args.kit, args.python, args.env)
    inside = [
        env_python,
        "-m",
        "dlbench.campaign.gpu_campaign",
        "--inside",
        "--started",
        str(started),
    ]
    passed = [a for a in (args.argv or []) if a != "--inside"]
    return subprocess.call(inside + passed, env=inside_environment(args.src, os.environ))


def inside_environment(src, environ):
    """The environment of the campaign inside its interpreter: ``src`` on
    the path, and bytecode written. The kit holds none (prepare_interpreter):
    what the campaign imports is compiled once and kept, unless the caller's
    environment forbids writing it; then every job compiled Snakemake, pandas
    and matplotlib again (the rehearsal on a machine that sets
    PYTHONDONTWRITEBYTECODE: tables and plots took 63 s for 8 runs)."""
    inside = dict(
        environ, PYTHONPATH=os.pathsep.join(filter(None, [src, environ.get("PYTHONPATH")]))
    )
    inside.pop("PYTHONDONTWRITEBYTECODE", None)
    return inside


# -- 2.-4. inside the prepared interpreter ---------------------------------------


def unmet_requirements(names):
    """What the kit's distributions require and this interpreter lacks or
    holds at a version they exclude."""
    from importlib import metadata

    from packaging.requirements import Requirement

    problems = []
    for name in names:
        for line in metadata.distribution(name).requires or []:
            requirement = Requirement(line)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            try:
                held = metadata.version(requirement.name)
            except metadata.PackageNotFoundError:
                problems.append("{} needs {}: absent".format(name, requirement))
                continue
            if not requirement.specifier.contains(held, prereleases=True):
                problems.append("{} needs {}: this machine has {}".format(name, requirement, held))
    return problems


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
                if member.name.startswith("results/probes/") and "/gpu/" in member.name:
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


def _gpu_probes(runs, precisions, done):
    """The GPU's matrix-product probe of each of ``precisions`` (the peak
    that MFU divides by), where ``runs`` hold a GPU run and ``done`` not the probe."""
    if not any(int(run.devices) > 0 for run, _ in runs):
        return []
    machine = runs[0][0].machine
    probes = ["results/probes/{}/gpu/precision={}.json".format(machine, p) for p in precisions]
    return [probe for probe in probes if probe not in done]


def _closing(done):
    """The stages that need every record here (tables, plots, the pack,
    the report): none where earlier campaigns' packs hold some of them."""
    if done:
        return []
    return [("tables and plots", ["all", "pack"]), ("report", ["--report", "results/report.html"])]


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
        probes = _gpu_probes(every, precisions, done)
    named = [
        ("gpu probes", probes),
        ("gpu runs, float32", pick(True, default=True, float32=True)),
        ("cpu runs, float32", cpu_first),
        ("gpu runs, reduced precision", pick(True, default=True, float32=False)),
        ("gpu runs, other compile mode", pick(True, default=False)),
        ("cpu runs, the rest", [path for path in pick(False) if path not in cpu_first]),
    ]
    return named + _closing(done)


def read_plan(path):
    """A campaign's plan (config/campaigns/): its config files and stages,
    checked against workflow/schemas/campaign_plan.schema.yaml."""
    import jsonschema
    import yaml

    with open(path) as handle:
        plan = yaml.safe_load(handle)
    with open("workflow/schemas/campaign_plan.schema.yaml") as handle:
        schema = yaml.safe_load(handle)
    try:
        jsonschema.validate(plan, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(part) for part in error.absolute_path)
        raise SystemExit("{}: {} (at {})".format(path, error.message, where or "the top")) from None
    return plan


def _selects(item, run, stand_in):
    from dlbench.plan import matrix

    named = {key: stand_in(value) if key == "dataset" else value for key, value in item.items()}
    return matrix.has_values(run._asdict(), named)


def plan_stages(configfiles, selections, done=frozenset()):
    """(name, targets) of a plan's stages, in its order: each runs the
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
        probes = _gpu_probes(every, precisions, done)
        if probes:
            named.append(("gpu probes, " + ", ".join(precisions), probes))
        named.append((stage["name"], [path for _, path in chosen]))
    return named + _closing(done)


def campaign_stages(args, configfiles, done=frozenset()):
    """The plan's stages (``--plan``), else the generic order of ``stages``."""
    if args.plan:
        return plan_stages(configfiles, read_plan(args.plan)["stages"], done)
    return stages(configfiles, done)


def _clock(seconds):
    return "{:d}:{:02d}".format(int(seconds) // 60, int(seconds) % 60)


def dry_run(args):
    """What the campaign would run, stage by stage, and how long each stage
    should take on a GPU of the kind that wrote the records in
    ``--estimate-from`` (dlbench.campaign.estimate): nothing is run, no kit
    is needed. Where ``--budget-seconds`` is given, the stage the budget
    would cut off is named."""
    from dlbench.campaign import estimate

    config = read_config(args.config)
    done = recorded_elsewhere(args.resume_from)
    timings = estimate.Estimator(args.estimate_from)
    planned = {path: run for run, path in runs_of(config)}
    say(
        "{} runs planned by {}{}; estimates from {} records in {}".format(
            len(planned),
            args.plan or " ".join(args.config),
            ", {} recorded by earlier campaigns".format(len(done)) if done else "",
            len(timings.records),
            ", ".join(args.estimate_from),
        )
    )
    budget = args.budget_seconds - args.pack_reserve_seconds if args.budget_seconds else None
    elapsed, cut = 0.0, None
    chosen = [
        (name, targets) for name, targets in campaign_stages(args, args.config, done) if targets
    ]
    for number, (name, targets) in enumerate(chosen, 1):
        runs = [planned[t] for t in targets if t in planned]
        probes = [t for t in targets if t.startswith("results/probes/")]
        lines = []
        seconds = len(probes) * args.probe_seconds
        for run in runs:
            guess = timings.run(config, run)
            seconds += guess.seconds + args.job_seconds
            lines.append(
                "    {:>5.0f} s  {}/{} {} devices={} {} {}: {}".format(
                    guess.seconds + args.job_seconds,
                    run.dataset,
                    run.model,
                    run.backend,
                    run.devices,
                    run.precision,
                    run.compile,
                    guess.basis,
                )
            )
        what = (
            "{} runs".format(len(runs))
            if runs
            else "{} probes".format(len(probes))
            if probes
            else " ".join(targets)
        )
        if runs or probes:
            elapsed += seconds
            estimated = "about {:.0f} s, {} from the start".format(seconds, _clock(elapsed))
        else:
            estimated = "not estimated"
        if budget is not None and cut is None and elapsed > budget:
            cut = name
        print("stage {}: {} ({}; {})".format(number, name, what, estimated))
        for line in lines:
            print(line)
    print(
        "each run adds {:.0f} s of Snakemake's own (--job-seconds), each probe takes {:.0f} s "
        "(--probe-seconds); the jobs that prepare data and weights run beside them on the "
        "CPU".format(args.job_seconds, args.probe_seconds)
    )
    if budget is not None:
        print(
            "budget {:.0f} s, {:.0f} s of it for the runs (--pack-reserve-seconds): {}".format(
                args.budget_seconds,
                budget,
                "every stage fits" if cut is None else "stops in the stage {!r}".format(cut),
            )
        )
    return 0


class GPUsNotListed(RuntimeError):
    """``nvidia-smi -L`` failed: this machine's GPUs are not known, which is
    not a machine without GPUs."""


def visible_gpus():
    """The GPUs ``nvidia-smi -L`` lists; GPUsNotListed, naming its failure
    (it could not start, did not answer, or exited with an error), where it
    lists none because it failed."""
    command = ["nvidia-smi", "-L"]
    try:
        done = subprocess.run(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, check=False
        )
    except OSError as error:
        raise GPUsNotListed("`nvidia-smi -L` could not start: {}".format(error)) from None
    except subprocess.TimeoutExpired:
        raise GPUsNotListed("`nvidia-smi -L` did not answer in 60 s") from None
    if done.returncode != 0:
        said = (done.stderr or done.stdout).decode(errors="replace").strip()
        raise GPUsNotListed(
            "`nvidia-smi -L` exited with status {}: {}".format(done.returncode, said or "no output")
        )
    return [line for line in done.stdout.decode().splitlines() if line.startswith("GPU ")]


def campaign_gpus(configfiles, done=frozenset()):
    """(the GPUs ``nvidia-smi -L`` lists, why it listed none or None). Where
    it fails and the campaign plans GPU runs, the campaign is refused with
    its failure, before any Snakemake starts: asking Snakemake for a GPU
    that may not work is no campaign. A campaign of CPU runs alone (the
    rehearsal's, on a machine without NVIDIA's driver) goes on."""
    try:
        return visible_gpus(), None
    except GPUsNotListed as error:
        failure = str(error)
    gpu_runs = [
        path for run, path in planned_runs(configfiles) if int(run.devices) > 0 and path not in done
    ]
    if gpu_runs:
        raise SystemExit(
            "this machine's GPUs are not known: {}. The campaign plans {} GPU runs and started "
            "none: make `nvidia-smi -L` list the GPUs (the driver, the device files), then run "
            "the same command again".format(failure, len(gpu_runs))
        )
    say("GPUs not listed ({}); no GPU run is planned".format(failure))
    return [], failure


def _interruptible():
    """In the stage's process before it starts: SIGINT does what it does by
    default. A campaign started in the background of a shell without job
    control (``nohup ... &``) ignores SIGINT, and an ignored signal stays
    ignored across exec: Snakemake would not hear the budget's interrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_stage(command, deadline, log):
    """Snakemake until it ends or the deadline: then interrupted (it
    cancels its jobs and removes what they left half-written) and, after a
    grace period, killed. Returns (exit status, interrupted)."""
    process = subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_interruptible,
    )
    while process.poll() is None:
        if time.time() >= deadline:
            say("budget reached: interrupting Snakemake")
            process.send_signal(signal.SIGINT)
            try:
                process.wait(INTERRUPT_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            return process.returncode, True
        time.sleep(1)
    return process.returncode, False


def pack(out, campaign, limit_bytes=0):
    """results.tar.gz (no data, no weights), campaign.json and the
    machine's pack (rule pack, once made) in ``out``; the logs left out
    where the archive would exceed ``limit_bytes`` (0: no limit)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "campaign.json").write_text(json.dumps(campaign, indent=1) + "\n")
    files = [
        path
        for folder in ("results", "logs")
        for path in sorted(Path(folder).rglob("*"))
        if path.is_file() and path.suffix in PACKED_SUFFIXES
    ]
    for machine_pack in Path("results/pack").glob("*.tar.gz"):
        shutil.copy2(str(machine_pack), str(out / machine_pack.name))
    archive = out / "results.tar.gz"
    for keep_logs in (True, False):
        with tarfile.open(str(archive), "w:gz") as tar:
            for path in files:
                if keep_logs or path.suffix != ".log":
                    tar.add(str(path))
        if not limit_bytes or archive.stat().st_size <= limit_bytes:
            return archive, keep_logs
    raise SystemExit("the records alone exceed {} bytes (--archive-limit-mib)".format(limit_bytes))


def inside(args):
    started = args.started or time.time()
    deadline = (  # no budget: every stage runs to its end
        started + args.budget_seconds - args.pack_reserve_seconds
        if args.budget_seconds
        else float("inf")
    )
    kit = json.loads((Path(args.kit) / "kit.json").read_text())
    problems = unmet_requirements([entry["name"] for entry in kit["carried"]])
    if problems:
        raise SystemExit(
            "the kit does not fit this machine's packages (remove their names from "
            "envs/gpu-image.txt, so that the kit carries them, and make gpu-kit again):\n  "
            + "\n  ".join(problems)
        )
    say("the kit's {} distributions have what they need".format(len(kit["carried"])))
    if args.prepare_only:
        return 0
    configfiles = campaign_config(args, sys.executable)
    done = recorded_elsewhere(args.resume_from)
    if done:
        say("{} runs recorded by earlier campaigns are left out".format(len(done)))
    gpus, gpus_not_listed = campaign_gpus(configfiles, done)
    campaign = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "budget_seconds": args.budget_seconds,
        "interpreter": sys.executable,
        "gpus": gpus,
        "gpus_not_listed": gpus_not_listed,
        "kit": {key: kit[key] for key in ("python_version", "kit_bytes", "image_list")},
        "configfiles": configfiles,
        "resumed_from": {"packs": args.resume_from or [], "runs_left_out": len(done)},
        "stages": [],
        "complete": False,
    }
    options = ["--configfile", *configfiles, "--cores", str(args.jobs or os.cpu_count())]
    options += ["--resources", "gpu={}".format(max(len(gpus), 1))]
    Path("logs").mkdir(exist_ok=True)
    complete = True
    with open("logs/gpu_campaign.log", "a") as log:
        # A Snakemake killed at an earlier budget's end (it outlived its grace
        # period) leaves its lock: the campaign is the folder's only Snakemake.
        snakemake = [sys.executable, "-m", "snakemake"]
        subprocess.call(snakemake + ["--unlock"] + options, stdout=log, stderr=subprocess.STDOUT)
        for name, targets in campaign_stages(args, configfiles, done):
            if not targets:  # no run of this kind in the config
                continue
            left = deadline - time.time()
            if left < args.min_stage_seconds:
                say("{}: not started, {:.0f} s of the budget left".format(name, max(left, 0)))
                campaign["stages"].append({"name": name, "started": False})
                complete = False
                continue
            say(
                "{}: Snakemake with {:.0f} s of the budget left".format(name, left)
                if args.budget_seconds
                else "{}: Snakemake".format(name)
            )
            began = time.time()
            command = [*snakemake, *targets, *options]
            status, interrupted = run_stage(command, deadline, log)
            seconds = time.time() - began
            say(
                "{}: {} after {:.0f} s".format(
                    name, "stopped" if interrupted else "exit {}".format(status), seconds
                )
            )
            campaign["stages"].append(
                {
                    "name": name,
                    "started": True,
                    "targets": len([t for t in targets if t.endswith(".json")]),
                    "seconds": round(seconds, 1),
                    "exit_status": status,
                    "interrupted": interrupted,
                }
            )
            complete = complete and not interrupted and status == 0
    campaign["complete"] = complete
    campaign["seconds"] = round(time.time() - started, 1)
    archive, with_logs = pack(args.out, campaign, int(args.archive_limit_mib * 2**20))
    say(
        "packed {} ({:.1f} MiB{}); {}".format(
            archive,
            archive.stat().st_size / 2.0**20,
            "" if with_logs else ", logs left out",
            "complete" if complete else "not complete: the same command resumes it",
        )
    )
    return 0 if complete else 3


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        help="the folder the packed results go to, to copy back from the GPU machine "
        "(required for a run)",
    )
    parser.add_argument("--kit", default=KIT_DIR, help="the wheels of make gpu-kit")
    parser.add_argument("--python", default="python3", help="the machine's interpreter")
    parser.add_argument("--env", default=ENV_DIR, help="where the campaign's interpreter goes")
    parser.add_argument(
        "--config",
        nargs="+",
        help="config files, later ones overriding earlier ones (Snakemake's --configfile; "
        "default: {}, or the plan's)".format(CONFIG),
    )
    parser.add_argument(
        "--plan",
        help="a campaign's plan (config/campaigns/): its config files, then --config's, and "
        "its stages in its order (default: config/gpu.yaml's generic stages)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the stages, their runs and how long each should take, and stop: "
        "nothing runs, no kit is needed",
    )
    parser.add_argument(
        "--estimate-from",
        nargs="+",
        default=[ESTIMATE_FROM],
        metavar="RECORDS",
        help="earlier campaigns' records the dry run's estimates come from: folders or "
        "results.tar.gz packs (default: %(default)s)",
    )
    parser.add_argument(
        "--job-seconds",
        type=float,
        default=5,
        help="the dry run's Snakemake time per run beyond its record (default: %(default)s)",
    )
    parser.add_argument(
        "--probe-seconds",
        type=float,
        default=17,
        help="the dry run's time per GPU probe (default: %(default)s)",
    )
    parser.add_argument(
        "--devices", type=int, nargs="+", help="device counts (default: the config's)"
    )
    parser.add_argument(
        "--budget-seconds",
        type=float,
        help="the whole campaign's time, the interpreter's preparation and the pack included, "
        "for a machine lent for a limited time; at its end the campaign stops and packs, and "
        "the same command again resumes (default: none, the campaign runs to its end)",
    )
    parser.add_argument(
        "--pack-reserve-seconds",
        type=float,
        default=45,
        help="the end of the budget kept for packing (default: %(default)s)",
    )
    parser.add_argument(
        "--min-stage-seconds",
        type=float,
        default=30,
        help="a stage is not started with less of the budget left (default: %(default)s)",
    )
    parser.add_argument(
        "--archive-limit-mib",
        type=float,
        default=0,
        help="the largest results.tar.gz, for a machine whose files come back through a "
        "transfer of limited size: the logs are left out above it (default: 0, no limit)",
    )
    parser.add_argument("--jobs", type=int, help="Snakemake's cores (default: every CPU)")
    parser.add_argument("--src", default="src", help="the library, on the interpreter's path")
    parser.add_argument(
        "--prepare-only", action="store_true", help="prepare the interpreter, check the kit, stop"
    )
    parser.add_argument(
        "--resume-from",
        nargs="+",
        metavar="RESULTS_TAR_GZ",
        help="earlier campaigns' results.tar.gz (another machine's): their runs "
        "recorded ok are not run again; tables and report are then made where "
        "the packs are imported",
    )
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--started", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.argv = argv
    if args.inside or args.dry_run:  # the machine's own interpreter may lack YAML
        if args.plan:
            args.config = read_plan(args.plan)["config"] + (args.config or [])
        args.config = args.config or [CONFIG]
    if args.dry_run:
        return dry_run(args)
    if not (args.out or args.prepare_only):
        parser.error("--out is required (where the packed results go)")
    return inside(args) if args.inside else outer(args)


if __name__ == "__main__":
    sys.exit(main())
