"""The README's smoke benchmarks (config/smoke.yaml, the first answer, and
config/smoke-full.yaml, every kind of workload) kept honest without running
them: each dry run plans a run for every cell of its matrix, and every
rule it runs, with every dataset, model, backend and environment it takes,
runs in the tests' config (config/test.yaml), whose workflow the other
end-to-end tests run and check."""

import re

import pytest
import yaml

from dlbench.plan import matrix
from testkit import REPO, run_snakemake
from workflows import TEST_CONFIG

SMOKE_CONFIGS = ("config/smoke.yaml", "config/smoke-full.yaml")
# The wildcards that choose what a job runs (the others choose a setting:
# the machine, the repeat, the value of a dimension).
CHOOSING = ("dataset", "model", "backend", "environment", "family", "framework")
AS_BENCH = ("python_stacks", "flame_graph", "plot_python_stacks")
# Each smoke config's runs, written out from the config by hand: (dataset,
# model): (the backends that run it, its repeats), every run at the one point
# the configs set (devices 0, all threads, float32, compile auto, pinned
# versions). keras-openvino infers only: n/a on a training workload; a Keras
# model of your own (imdb_transformer) is n/a on the native backends.
CPU_BACKENDS = [
    "keras-tensorflow",
    "keras-jax",
    "keras-torch",
    "keras-openvino",
    "keras2-theano",
    "keras2-cntk",
    "keras-mxnet",
    "native-tensorflow",
    "native-jax",
    "native-torch",
    "native-mxnet",
    "native-pytensor",
    "native-chainer",
    "native-cntk",
]
TRAINING = [backend for backend in CPU_BACKENDS if backend != "keras-openvino"]
KERAS3 = ["keras-tensorflow", "keras-jax", "keras-torch"]
NATIVE3 = ["native-tensorflow", "native-jax", "native-torch"]
SMOKE_RUNS = {
    "config/smoke.yaml": {
        # its time to accuracy takes three seeds: three repeats
        ("digits", "mlp"): (TRAINING, 3),
        ("digits", "lenet"): (CPU_BACKENDS, 1),
    },
    "config/smoke-full.yaml": {
        ("digits", "mlp"): (TRAINING, 3),
        ("digits", "cnn"): (TRAINING, 1),
        ("digits", "lenet"): (CPU_BACKENDS, 1),
        ("cifar10_tiny", "cifar_cnn"): (KERAS3 + NATIVE3, 1),
        ("imdb_tiny", "imdb_gru"): (KERAS3 + NATIVE3 + ["native-cntk"], 1),
        ("imdb_tiny", "imdb_transformer"): (KERAS3, 1),
        ("babi_tiny", "babi_rnn"): (KERAS3 + NATIVE3, 1),
        ("imagenet_synthetic", "resnet50"): (KERAS3 + ["keras-openvino"] + NATIVE3, 1),
    },
}
# 13 training backends on the MLP (3 seeds) and 14 on LeNet: 13 x 3 + 14; and
# 13 x 3 + 13 + 14 + 6 + 7 + 3 + 6 + 7
SMOKE_RUN_COUNTS = {"config/smoke.yaml": 53, "config/smoke-full.yaml": 95}
RUN_RECORD = re.compile(
    r"results/runs/([^/]+)/([^/]+)/([^/]+)/([^/]+)/devices=0/threads=all/precision=float32/"
    r"compile=auto/versions=pinned/rep(\d+)/run\.json"
)


def smoke_runs(smoke_config):
    """{(dataset, model, backend, repeat)} of a smoke config's runs, as SMOKE_RUNS lists them."""
    return {
        (dataset, model, backend, repeat)
        for (dataset, model), (backends, repeats) in SMOKE_RUNS[smoke_config].items()
        for backend in backends
        for repeat in range(1, repeats + 1)
    }


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


@pytest.mark.parametrize("smoke_config", SMOKE_CONFIGS)
def test_the_smoke_plans_a_run_per_cell_and_the_tests_run_every_rule_path_it_takes(smoke_config):
    smoke = planned_jobs(smoke_config)
    records = {path for rule, _, outputs in smoke if rule == "bench" for path in outputs}
    records = {path for path in records if path.endswith("/run.json")}
    planned, machines = set(), set()
    for path in records:
        found = RUN_RECORD.fullmatch(path)
        assert found, path  # a run at the smoke's one point
        machine, dataset, model, backend, repeat = found.groups()
        planned.add((dataset, model, backend, int(repeat)))
        machines.add(machine)
    assert len(machines) == 1  # this machine's runs
    assert len(records) == len(planned) == SMOKE_RUN_COUNTS[smoke_config]
    assert planned == smoke_runs(smoke_config)

    tested = what_each_rule_takes(planned_jobs(TEST_CONFIG))
    # A python stacks run is a timed run's harness and supervisor under py-spy
    # (the tests sample a Keras, a native and a Python 3.6 backend); its flame
    # graph and plot are drawn in the workflow's environment: what bench takes
    # covers them.
    for rule in AS_BENCH:
        tested[rule] = tested.get(rule, set()) | tested["bench"]
    untested = {
        rule: sorted(taken - tested.get(rule, set()))
        for rule, taken in what_each_rule_takes(smoke).items()
        if taken - tested.get(rule, set())
    }
    assert untested == {}, untested


def targets_of(configfile):
    """What rule all asks for in a dry run from nothing: the targets each
    rule file adds after its rules."""
    done = run_snakemake(REPO, "-n", "--forceall", "--configfile", str(configfile))
    found = re.search(r"^(?:local)?rule all:\n    input: (.*)$", done.stdout, re.M)
    assert found, done.stdout[-3000:]
    return [path.strip() for path in found.group(1).split(",")]


def test_every_run_is_a_target_and_every_table_of_the_config(tmp_path):
    config = yaml.safe_load((REPO / TEST_CONFIG).read_text())
    outputs = targets_of(TEST_CONFIG)
    runs = [path for path in outputs if path.endswith("/run.json")]
    assert len(runs) == len(matrix.runs(matrix.normalise(dict(config, machine="auto")))) > 50
    assert {"results/summary.csv", "results/tables/equivalence.md"} <= set(outputs)
    assert "results/tables/digits_mlp.md" in outputs
    assert "results/plots/digits_cnn_scaling.png" in outputs  # devices [1, 2]
    assert "results/plots/cifar10_tiny_cifar_cnn_threads_scaling.png" in outputs
    assert "results/tables/speedups.md" in outputs  # eager and compiled, two precisions
    assert "results/tables/abstraction_cost.md" in outputs
    unchecked = tmp_path / "unchecked.yaml"
    unchecked.write_text(yaml.safe_dump(dict(config, equivalence_check={"steps": 0}, exclude=[])))
    assert "results/tables/equivalence.md" not in targets_of(unchecked)
