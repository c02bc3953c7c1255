"""Every config the schema accepts ends in tables and a report, or is refused
at planning with its reason in at most three lines. The configs are generated
from the schema: every count, size and fraction of the top level, of a
workload (training and inference), of its trained weights and of the
equivalence check at the smallest and the largest value the schema accepts
(``LARGE`` where it sets no bound), every dimension with one value, and their
combinations. Each accepted config's plan gets a record for every run (made
from real records, shaped as its settings make them: its epochs, repeats,
samples and batches) and goes through collect, every workload table, the
significance table, the plots and the report's front page, as their rules run
them (workflow/scripts), without a backend."""

import copy
import itertools
import os
import statistics

import pytest
import yaml

from dlbench.analysis import (
    collect,
    front_page,
    plots_convergence,
    plots_heat_maps,
    plots_timings,
    stats,
    tables,
)
from dlbench.plan import config_sources, matrix, targets, validation
from testkit import REPO, fixture_record

SCHEMA_PATH = REPO / "workflow" / "schemas" / "config.schema.yaml"
SCHEMA = validation.load_schema(SCHEMA_PATH)
# The smoke's two workloads (a training and an inference) on a Keras, an
# inference-only and a native backend: every kind of cell, few records.
BASE = yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())
BASE["backends"] = {"keras-jax": None, "keras-openvino": None, "native-torch": None}
# The largest value tried where the schema sets no upper bound: far beyond
# any run the smoke or the tests make, small enough for records in memory.
LARGE = {"integer": 5000, "number": 1.0e6}
# Fractions and other open intervals are tried this close to their bounds.
INSIDE = 1.0e-6


def resolved(node):
    return config_sources.resolved(node, SCHEMA)


def extremes(node):
    """The smallest and the largest value a numeric schema accepts (the
    first numeric alternative of a oneOf)."""
    node = resolved(node)
    for option in node.get("oneOf", []):
        if resolved(option).get("type") in ("integer", "number"):
            return extremes(option)
    kind = node.get("type")
    if kind not in ("integer", "number"):
        return None
    if "enum" in node:
        return min(node["enum"]), max(node["enum"])
    step = 1 if kind == "integer" else INSIDE
    low = node.get("minimum", node.get("exclusiveMinimum", 0) + step)
    if "exclusiveMinimum" not in node and "minimum" not in node:
        low = 0 if kind == "integer" else INSIDE
    high = node.get("maximum", node.get("exclusiveMaximum", None))
    if high is None:
        high = LARGE[kind]
    elif "exclusiveMaximum" in node:
        high = high - step
    return low, high


def numeric_places():
    """[(path, (low, high))]: every count, size and fraction of the config
    that a workload, its trained weights or the equivalence check has, as a
    path of keys (a workload's: ``("workloads", task, key)``)."""
    places = []
    top = SCHEMA["properties"]
    for name, node in sorted(top.items()):
        found = extremes(node)
        if found and name not in ("gpu_wait_minutes", "concurrent_cpu_runs"):
            places.append(((name,), found))
    check = resolved(top["equivalence_check"])
    for name, node in sorted(check.get("properties", {}).items()):
        found = extremes(node)
        if found:
            places.append((("equivalence_check", name), found))
    workload = top["workloads"]["items"]["properties"]
    for name, node in sorted(workload.items()):
        found = extremes(node)
        if found:
            task = "infer" if name in ("warmup", "latency_samples", "throughput_batches") else None
            places.append((("workloads", task, name), found))
    for name, node in sorted(workload["trained_weights"]["properties"].items()):
        found = extremes(node)
        if found:
            places.append((("workloads", "infer", "trained_weights", name), found))
    return places


def set_at(config, path, value):
    if path[0] != "workloads":
        target = config
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = value
        return
    _, task, *keys = path
    for entry in config["workloads"]:
        if task in (None, entry.get("task", "train")):
            if keys[0] == "epochs" and entry.get("task") == "infer":
                continue
            target = entry
            for key in keys[:-1]:
                target = target.setdefault(key, {})
            target[keys[-1]] = value


def single_dimension_values():
    """[(name, value)]: each dimension's values, one at a time."""
    found = [("devices", [count]) for count in (0, 1, 8)]
    found += [("threads", [value]) for value in (1, "all")]
    found += [("precision", [value]) for value in resolved(SCHEMA["$defs"]["precision"])["enum"]]
    found += [("compile", [value]) for value in resolved(SCHEMA["$defs"]["compile"])["enum"]]
    return found


def edge_configs():
    """{name: config}."""
    places = numeric_places()
    configs = {}
    for path, (low, high) in places:
        for which, value in (("smallest", low), ("largest", high)):
            config = copy.deepcopy(BASE)
            set_at(config, path, value)
            configs["{} {}".format(".".join(str(k) for k in path if k), which)] = config
    for (name, value), which in itertools.product(
        single_dimension_values() + [(None, None)], ("smallest", "largest")
    ):
        config = copy.deepcopy(BASE)
        for path, extreme in places:
            if path[-1] != "repeats" or which == "smallest":
                set_at(config, path, extreme[0] if which == "smallest" else extreme[1])
        if which == "largest":
            # The records multiply with the repeats (their largest is tried
            # alone above): every other count at its largest.
            config["repeats"] = 3
        if name is not None:
            config[name] = value
        configs[
            "every count {}{}".format(which, ", {}={}".format(name, value[0]) if name else "")
        ] = config
    return configs


EDGE_CONFIGS = edge_configs()


def planned(config):
    """The config as the workflow plans it, or the refusal's message."""
    config = copy.deepcopy(config)
    try:
        # Jobs run elsewhere (a cluster): this machine's CPUs and GPUs do not count.
        validation.validate_config(config, SCHEMA, SCHEMA_PATH, machine=None, log_path=os.devnull)
    except matrix.ConfigError as error:
        return None, str(error)
    config["machine"] = "box"
    return config, None


def record_for(config, run):
    """The record a run of ``config`` would write, from a real one."""
    entry = matrix.workload(config, run.dataset, run.model)
    identity = dict(run._asdict())
    identity["seed"] = config["seed"]
    if entry.get("task", "train") == "infer":
        record = fixture_record("infer_ok", **identity)
        record["latencies_ms"] = cycled(record["latencies_ms"], entry["latency_samples"])
        record["latency_ms"] = {
            "p50": statistics.median(record["latencies_ms"]),
            "p90": sorted(record["latencies_ms"])[int(0.9 * (entry["latency_samples"] - 1))],
            "p99": sorted(record["latencies_ms"])[int(0.99 * (entry["latency_samples"] - 1))],
            "mean": statistics.mean(record["latencies_ms"]),
        }
        record["batch_seconds"] = cycled(record["batch_seconds"], entry["throughput_batches"])
        return record
    record = fixture_record("train_ok", **identity)
    epochs = cycled(record["epochs"], entry["epochs"])
    record["epochs"] = [dict(epoch, epoch=number) for number, epoch in enumerate(epochs, 1)]
    if not config.get("validate_every_epoch", True) or "validation_split" in entry:
        for epoch in record["epochs"][:-1]:
            epoch.pop("val_loss", None)
            epoch.pop("val_accuracy", None)
    record["first_epoch_seconds"] = epochs[0]["seconds"]
    steady = [epoch["seconds"] for epoch in epochs[1:]]
    record["steady_epoch_seconds"] = statistics.median(steady) if steady else None
    record["train_samples"] = min(entry.get("train_samples", 1437), 1437)
    return record


def cycled(values, count):
    return [values[index % len(values)] for index in range(count)]


def tables_and_report(config, folder):
    """What the rules after the runs make of the records (workflow/scripts):
    collect, the workload tables, significance, the plots and the front page."""
    plan = targets.WorkflowTargets(config, REPO, "venv")
    records = [record_for(config, run) for run in matrix.runs(config)]
    metrics = collect.metrics(records)
    epochs = collect.epochs(records)
    latencies = collect.latencies(records)
    summary = collect.summary(
        metrics,
        not_applicable=matrix.not_applicable_cells(config),
        tolerances=plan.accuracy_tolerances(),
        noise_threshold=config["noise_threshold"],
        alpha=config["significance_level"],
    )
    for name, frame in (("metrics", metrics), ("summary", summary)):
        frame.to_csv(folder / "{}.csv".format(name), index=False)
    summary = collect.read_table(folder / "summary.csv")
    metrics = collect.read_table(folder / "metrics.csv")
    written = []
    for entry in config["workloads"]:
        dataset, model = entry["dataset"], entry["model"]
        table, task = tables.workload_table(summary, dataset, model)
        outputs = table_outputs(folder, "{}_{}".format(dataset, model))
        tables.write(outputs, table, dataset + " / " + model, tables.TABLE_CAPTIONS[task])
        written += list(outputs.values())
        for plotter, frame in plotters(task, summary, epochs, latencies, config):
            image = folder / "{}_{}_{}.png".format(dataset, model, plotter.__name__)
            plotter(frame, dataset, model, str(image))
            written.append(str(image))
    pairs = stats.pairwise(metrics, collect.HEADLINE, config["significance_level"])
    outputs = table_outputs(folder, "significance")
    tables.write(outputs, pairs, "pairs", stats.CAPTION, shown=stats.shown(pairs))
    pairs = collect.read_table(outputs["csv"])
    heat_map, page = str(folder / "relative_speed.png"), str(folder / "front_page.rst")
    plots_heat_maps.relative_speed(summary, heat_map)
    front_page.write(summary, pairs, config["significance_level"], heat_map, page)
    return written + [outputs["csv"], page], summary


class Outputs(dict):
    """Snakemake's named output, as tables.write reads it."""

    __getattr__ = dict.__getitem__


def table_outputs(folder, name):
    return Outputs(
        (kind, str(folder / "{}.{}".format(name, kind))) for kind in ("markdown", "csv", "html")
    )


def plotters(task, summary, epochs, latencies, config):
    if task == "train":
        found = [(plots_timings.epoch_time, summary), (plots_convergence.convergence, epochs)]
    else:
        found = [(plots_timings.latency, latencies), (plots_timings.throughput, summary)]
    if len(matrix.dimension_values(config, "devices")) > 1:
        found.append((plots_timings.scaling, summary))
    if len(matrix.dimension_values(config, "threads")) > 1:
        found.append((plots_timings.threads_scaling, summary))
    return found


def test_the_edge_configs_cover_every_count_at_both_ends_and_every_dimension():
    names = set(EDGE_CONFIGS)
    for key in ("repeats", "workloads.epochs", "workloads.infer.latency_samples"):
        assert {key + " smallest", key + " largest"} <= names
    assert "workloads.infer.trained_weights.epochs largest" in names
    assert "equivalence_check.steps smallest" in names
    assert "every count smallest, precision=mixed_float16" in names
    assert len(EDGE_CONFIGS) > 40


# Combinations refused for their reason: the smoke's LeNet, timed on one
# device, has no cell on eight alone.
REFUSED_COMBINATIONS = {"devices=8": "inference is timed on one device"}


@pytest.mark.parametrize("name", [name for name in sorted(EDGE_CONFIGS) if "every count" in name])
def test_the_combinations_reach_the_tables_or_are_refused_for_their_reason(name):
    """A combination refused for some other value would test nothing but
    that value's refusal, which the single-value configs test."""
    refusal = planned(EDGE_CONFIGS[name])[1]
    expected = [reason for value, reason in REFUSED_COMBINATIONS.items() if name.endswith(value)]
    if expected:
        assert expected[0] in (refusal or ""), refusal
    else:
        assert refusal is None


@pytest.mark.parametrize("name", sorted(EDGE_CONFIGS))
def test_an_edge_config_ends_in_tables_and_a_report_or_is_refused_with_its_reason(name, tmp_path):
    config, refusal = planned(EDGE_CONFIGS[name])
    if refusal is not None:
        lines = refusal.splitlines()
        assert 1 <= len(lines) <= 3 and "Traceback" not in refusal, refusal
        return
    written, summary = tables_and_report(config, tmp_path)
    for path in written:
        assert os.path.getsize(path) > 0, path
    cells = {run._replace(repeat=1) for run in matrix.runs(config)}
    assert (summary["status"] == "ok").sum() == len(cells)
    page = (tmp_path / "front_page.rst").read_text()
    assert page.startswith("Relative speed") and "image::" in page
