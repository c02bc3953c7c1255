"""Precision and compilation through Snakemake, on the CPU: the session's
precision workflow (conftest.precision_config: the digits MLP in float32 and
mixed_bfloat16, eager and compiled, on every Keras 3 backend that trains
and on native torch and JAX), and mixed_float16 on the same MLP."""

import json

import pandas as pd
import pytest

from conftest import precision_config, run_json, run_snakemake, write_config
from dlbench import catalog, matrix

pytestmark = pytest.mark.e2e

FLOAT16_CONFIG = "config/float16.yaml"
# Test accuracy of a mixed_bfloat16 cell against float32's (same backend and
# compile mode) after the smoke's 4 epochs of the MLP on the digits: the
# smoke's accuracy_tolerance. Measured: within 0.027 on all 8 pairs; dropout
# masks differ between cells (torch.compile draws them with its own RNG), so
# two float32 cells of one backend differ by as much.
ACCURACY_TOLERANCE = 0.05


def record(workdir, backend, precision, mode):
    path = run_json("digits", "mlp", backend, threads=1, precision=precision, compile=mode)
    return json.loads((workdir / path).read_text())


def cells():
    return [(run.backend, run.precision, run.compile) for run in matrix.runs(precision_config())]


def test_every_mode_runs_and_the_record_says_what_ran(precision_workflow):
    ran = cells()
    assert set(ran) >= {
        ("keras-torch", "mixed_bfloat16", "eager"),
        ("keras-torch", "mixed_bfloat16", "compiled"),
        ("keras-tensorflow", "mixed_bfloat16", "eager"),
        ("keras-tensorflow", "mixed_bfloat16", "compiled"),
        ("keras-jax", "mixed_bfloat16", "compiled"),
        ("native-torch", "mixed_bfloat16", "eager"),
        ("native-torch", "mixed_bfloat16", "compiled"),
        ("native-jax", "mixed_bfloat16", "compiled"),
    }
    for backend, precision, mode in ran:
        found = record(precision_workflow, backend, precision, mode)
        assert found["status"] == "ok", (backend, precision, mode, found["error"])
        assert (found["precision"], found["compile"]) == (precision, mode)
        settings = found["settings"]
        if "jit_compile" in catalog.compile_settings(backend, mode):
            key = "torch_compile" if backend == "native-torch" else "jit_compile"
            assert settings[key] is (mode == "compiled"), (backend, mode, settings)
        if precision == "mixed_bfloat16":
            ran_in = settings["precision"]
            assert ran_in["asked"] == "mixed_bfloat16"
            assert (ran_in["compute_dtype"], ran_in["variable_dtype"]) == (
                "bfloat16",
                "float32",
            ), (backend, ran_in)
        elif backend.startswith("keras-"):
            assert settings["precision"]["compute_dtype"] == "float32"
        assert isinstance(found["environment"]["cpu_precision_flags"], list)
    summary = pd.read_csv(precision_workflow / "results/summary.csv")
    bf16 = summary[(summary["precision"] == "mixed_bfloat16") & (summary["status"] == "ok")]
    assert len(bf16) == sum(1 for _, precision, _ in ran if precision == "mixed_bfloat16")
    assert bf16["precision_ran"].str.startswith("bfloat16 compute, float32 variables").all()
    # JAX has no eager mode: its cells say why, never run
    shown = summary.set_index(["backend", "precision", "compile"])
    assert shown.loc[("keras-jax", "float32", "eager"), "status"] == "not_applicable"


def test_reduced_precision_costs_little_accuracy_and_the_speedups_are_tabled(precision_workflow):
    found = pd.read_csv(precision_workflow / "results/tables/speedups.csv")
    assert len(found) == len(cells())
    reduced = found[found["precision"] == "mixed_bfloat16"]
    for row in reduced.to_dict("records"):
        assert abs(row["accuracy_change"]) <= ACCURACY_TOLERANCE, row
        assert row["speedup_ci_low"] <= row["speedup"] <= row["speedup_ci_high"]
    baselines = found.groupby("backend")["baseline"].first().to_dict()
    assert baselines["keras-torch"] == "float32, compile=eager"
    assert baselines["keras-jax"] == "float32, compile=compiled"  # JAX has no eager mode
    compiled = found[(found["compile"] == "compiled") & (found["backend"] == "keras-torch")]
    assert compiled["first_epoch_extra_seconds"].notna().all()
    shown = (precision_workflow / "results/tables/speedups.md").read_text()
    assert "mixed_bfloat16, compiled" in shown and "float32, eager" in shown


def test_float16_runs_or_is_refused_with_its_reason(precision_workflow):
    config = precision_config(precision=("mixed_float16",), compile_modes=("auto",))
    config["workloads"] = [dict(w, epochs=2) for w in config["workloads"]]
    write_config(precision_workflow / FLOAT16_CONFIG, config)
    refused = {c["backend"]: c["reason"] for c in matrix.not_applicable_cells(config)}
    assert set(refused) == {"native-jax"} and "loss scaling" in refused["native-jax"]
    runs = matrix.runs(config)
    targets = [matrix.run_dir(run) + "/run.json" for run in runs]
    run_snakemake(precision_workflow, *targets, "--configfile", FLOAT16_CONFIG, "-j2")
    for run in runs:
        found = record(precision_workflow, run.backend, "mixed_float16", "auto")
        assert found["status"] == "ok", (run.backend, found["error"])
        ran_in = found["settings"]["precision"]
        assert ran_in["compute_dtype"] == "float16", (run.backend, ran_in)
        assert ran_in.get("loss_scaling"), (run.backend, ran_in)
