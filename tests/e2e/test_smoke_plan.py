"""The README's smoke benchmark (config/smoke.yaml) kept honest without
running it: its dry run plans a run for every cell of its matrix, and every
rule it runs, with every dataset, model, backend and environment it takes,
runs in the tests' config (config/test.yaml), whose workflow the other
end-to-end tests run and check."""

import re

import yaml

from dlbench.plan import matrix, paths
from testkit import REPO, run_snakemake
from workflows import TEST_CONFIG

SMOKE_CONFIG = "config/smoke.yaml"
# The wildcards that choose what a job runs (the others choose a setting:
# the machine, the repeat, the value of a dimension).
CHOOSING = ("dataset", "model", "backend", "environment", "family", "framework")


def planned_jobs(configfile):
    """(rule, {wildcard: value}, [output]) of every job of a dry run from nothing."""
    done = run_snakemake(REPO, "-n", "--forceall", "--configfile", configfile)
    jobs = []
    for line in done.stdout.splitlines():
        found = re.match(r"^(?:local)?rule (\w+):$", line)
        if found:
            jobs.append((found.group(1), {}, []))
        elif jobs and line.strip().startswith("wildcards:"):
            for pair in line.split(":", 1)[1].split(","):
                name, _, value = pair.strip().partition("=")
                jobs[-1][1][name] = value
        elif jobs and line.strip().startswith("output:"):
            jobs[-1][2].extend(path.strip() for path in line.split(":", 1)[1].split(","))
    return jobs


def what_each_rule_takes(jobs):
    """{rule: {(wildcard, value)}} over the choosing wildcards."""
    found = {}
    for rule, wildcards, _ in jobs:
        found.setdefault(rule, set()).update(
            (name, value) for name, value in wildcards.items() if name in CHOOSING
        )
    return found


def test_the_smoke_plans_a_run_per_cell_and_the_tests_run_every_rule_path_it_takes():
    smoke = planned_jobs(SMOKE_CONFIG)
    config = matrix.normalise(yaml.safe_load((REPO / SMOKE_CONFIG).read_text()))
    records = {path for rule, _, outputs in smoke if rule == "bench" for path in outputs}
    records = {path for path in records if path.endswith("/run.json")}
    assert records == {paths.run_dir(run) + "/run.json" for run in matrix.runs(config)}

    tested = what_each_rule_takes(planned_jobs(TEST_CONFIG))
    untested = {
        rule: sorted(taken - tested.get(rule, set()))
        for rule, taken in what_each_rule_takes(smoke).items()
        if taken - tested.get(rule, set())
    }
    assert untested == {}, untested
