"""The GPU campaign's dry run (``--dry-run``): the stages it would run, their
runs, and how long each should take by earlier campaigns' records; nothing
is run and no kit is needed."""

from dlbench.campaign.config_files import read_config, runs_of
from dlbench.campaign.progress import say
from dlbench.campaign.stage_order import campaign_stages, recorded_elsewhere
from dlbench.plan import paths


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
            args.campaign or " ".join(args.config),
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
        probes = [t for t in targets if t.startswith(paths.PROBES_DIR)]
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
