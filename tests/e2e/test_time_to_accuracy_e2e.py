"""Time to accuracy on real runs: native-torch trains the digits MLP on three
seeds, evaluating every 2 steps off the clock, as the workflow's runs of a
workload with ``time_to_accuracy`` do; beside it the same runs slowed on
purpose per step (a pause on the clock, the same computation), and the same
runs with their update slipped (a tenth of the learning rate). The analysis
must find the slowed backend later in seconds in the same steps, the slipped
one needing more steps, and a target no run reaches "did not converge" with
no time."""

import copy

import pytest

from dlbench.analysis import collect, time_to_accuracy
from dlbench.plan import matrix, paths, run_spec
from workflows import TIME_TO_ACCURACY_SEEDS, harness_with, load_test_config

CONFIG = matrix.normalise(load_test_config())
BACKEND = "native-torch"
SEEDS = TIME_TO_ACCURACY_SEEDS
EVERY = 2
TARGET = 0.9
PAUSE_S = 0.25  # a step's pause on the slowed backend's clock
# Put into the slowed runs' process before the harness: each training call
# pauses PAUSE_S a step after it computed, on the clock the adapter reports.
SLOWED = (
    "import math, time\n"
    "from dlbench.run.backends import native_torch_adapter\n"
    "train = native_torch_adapter.Adapter.train_epoch\n"
    "def slowed(self, model, x, y, batch_size):\n"
    "    result = train(self, model, x, y, batch_size)\n"
    "    pause = {} * math.ceil(len(y) / float(batch_size))\n"
    "    time.sleep(pause)\n"
    "    result['seconds'] += pause\n"
    "    return result\n"
    "native_torch_adapter.Adapter.train_epoch = slowed\n"
).format(PAUSE_S)


def seed_specs():
    """The tests' config's eager digits-MLP run of the backend at each of the
    seeds (repeat r has seed seed + r - 1), evaluating every EVERY steps."""
    (run,) = [
        run
        for run in matrix.runs(CONFIG)
        if (run.dataset, run.model, run.backend, run.compile) == ("digits", "mlp", BACKEND, "eager")
        and int(run.repeat) == 1
    ]
    first = run_spec.spec(CONFIG, run)
    for repeat in range(1, SEEDS + 1):
        seed = CONFIG["seed"] + repeat - 1
        weights = paths.WEIGHTS.format(dataset="digits", model="mlp", seed=seed)
        yield first._replace(
            repeat=repeat, seed=seed, initial_weights=weights, evaluate_every=EVERY
        ).as_json()


@pytest.fixture(scope="module")
def records(built_workflow, tmp_path_factory):
    """The runs of each kind ("correct", "slowed", "slipped"), each kind's
    records under a backend name of its own."""
    folder = tmp_path_factory.mktemp("time_to_accuracy")
    found = []
    for kind in ("correct", "slowed", "slipped"):
        for spec in seed_specs():
            spec = copy.deepcopy(spec)
            weights, data = built_workflow.build(spec["initial_weights"], "results/data/digits.npz")
            spec["initial_weights"] = str(weights)
            if kind == "slipped":
                spec["hyper"]["optimizer"]["learning_rate"] /= 10
            name = "{}-seed{}".format(kind, spec["seed"])
            record = harness_with(
                built_workflow,
                BACKEND,
                spec,
                data,
                folder / (name + ".json"),
                folder / (name + ".csv"),
                SLOWED if kind == "slowed" else "",
            )
            found.append(dict(record, backend="{}-{}".format(BACKEND, kind)))
    return found


def analysed(records, target):
    settings = {"digits/mlp": {"target": target, "evaluate_every": EVERY}}
    runs = time_to_accuracy.per_run(
        time_to_accuracy.evaluations(records), collect.metrics(records), settings
    )
    cells = time_to_accuracy.per_cell(runs, time_to_accuracy.pairs(runs))
    return runs.set_index(["backend", "repeat"]), cells.set_index("backend")


def test_every_run_evaluates_every_two_steps_from_step_0(records):
    for record in records:
        steps = [row["step"] for row in record["evaluations"]]
        assert steps[0] == 0 and record["evaluate_every"] == EVERY
        assert all(later - earlier == EVERY for earlier, later in zip(steps, steps[1:-1]))


def test_a_backend_slowed_per_step_reaches_the_target_later_in_the_same_steps(records):
    runs, cells = analysed(records, TARGET)
    for repeat in range(1, SEEDS + 1):
        correct = runs.loc[("native-torch-correct", repeat)]
        slowed = runs.loc[("native-torch-slowed", repeat)]
        assert correct["reached"] and slowed["reached"], (correct, slowed)
        assert slowed["steps_to_target"] == correct["steps_to_target"]
        # at least the pauses of the steps to the target, less timing noise
        paused = PAUSE_S * slowed["steps_to_target"]
        assert slowed["seconds_to_target"] > correct["seconds_to_target"] + paused / 2
    assert (
        cells.loc["native-torch-slowed", "time_to_target"]
        > (cells.loc["native-torch-correct", "time_to_target"])
    )


def test_a_slipped_update_needs_more_steps(records):
    runs, cells = analysed(records, TARGET)
    for repeat in range(1, SEEDS + 1):
        correct = runs.loc[("native-torch-correct", repeat)]
        slipped = runs.loc[("native-torch-slipped", repeat)]
        assert (not slipped["reached"]) or (
            slipped["steps_to_target"] > correct["steps_to_target"]
        ), (correct, slipped)
    assert cells.loc["native-torch-correct", "reached"] == SEEDS


def test_a_target_no_run_reaches_did_not_converge_without_a_time(records):
    _, cells = analysed(records, 0.9999)
    for backend, cell in cells.iterrows():
        assert cell["reached"] == 0 and cell["seeds"] == SEEDS, backend
        assert cell["time_to_target"] is None or cell["time_to_target"] != cell["time_to_target"]
        assert cell["verdict"].startswith("did not converge"), cell["verdict"]
