"""Precision and compilation through Snakemake, on the CPU, in a workflow
of its own that links the session's venvs: the digits MLP and CNN in
float32 and mixed_bfloat16, eager and compiled, on every Keras 3 backend
that trains and on native torch and JAX; mixed_float16 on the MLP."""

import json

import pandas as pd
import pytest
import yaml

from conftest import REPO, copy_workflow, run_json, run_snakemake, write_config
from dlbench import catalog, matrix

pytestmark = pytest.mark.e2e

CONFIG = "config/precision.yaml"
FLOAT16_CONFIG = "config/float16.yaml"
BACKENDS = ("keras-tensorflow", "keras-jax", "keras-torch", "native-torch", "native-jax")
# Test accuracy of a reduced-precision cell against float32's, same
# backend and compile mode, after the smoke's epochs on the digits (measured:
# see ACCURACY in the README's precision section).
ACCURACY_TOLERANCE = 0.05


def precision_config(precision=("float32", "mixed_bfloat16"), compile_modes=("eager", "compiled")):
    smoke = yaml.safe_load((REPO / "config" / "smoke.yaml").read_text())
    workloads = [
        dict(w, repeats=1, epochs=3) for w in smoke["workloads"] if w["model"] in ("mlp", "cnn")
    ]
    for workload in workloads:
        workload.pop("backend_settings", None)  # the compile mode decides
    return dict(
        smoke,
        backends={b: smoke["backends"][b] for b in BACKENDS},
        workloads=workloads,
        precision=list(precision),
        compile=list(compile_modes),
        equivalence_check={"steps": 0},
        custom_models={},
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, built_workflow):
    for backend in BACKENDS:
        built_workflow.venv(backend)
    workdir = copy_workflow(tmp_path_factory.mktemp("precision"), built_workflow.path, BACKENDS)
    write_config(workdir / CONFIG, precision_config())
    targets = ["results/summary.csv", "results/tables/speedups.md"]
    run_snakemake(workdir, *targets, "--configfile", CONFIG, "-j2")
    return workdir


def record(workdir, model, backend, precision, mode):
    path = run_json("digits", model, backend, precision=precision, compile=mode)
    return json.loads((workdir / path).read_text())


def cells():
    config = precision_config()
    for run in matrix.runs(config):
        yield run.model, run.backend, run.precision, run.compile


def test_every_mode_runs_and_the_record_says_what_ran(workdir):
    ran = list(cells())
    assert {(b, p, c) for _, b, p, c in ran} >= {
        ("keras-torch", "mixed_bfloat16", "eager"),
        ("keras-torch", "mixed_bfloat16", "compiled"),
        ("keras-tensorflow", "mixed_bfloat16", "compiled"),
        ("keras-jax", "mixed_bfloat16", "compiled"),
        ("native-torch", "mixed_bfloat16", "compiled"),
        ("native-jax", "mixed_bfloat16", "compiled"),
    }
    for model, backend, precision, mode in ran:
        found = record(workdir, model, backend, precision, mode)
        assert found["status"] == "ok", (model, backend, precision, mode, found["error"])
        assert (found["precision"], found["compile"]) == (precision, mode)
        settings = found["settings"]
        if mode != "auto" and "jit_compile" in catalog.compile_settings(backend, mode):
            compiled = mode == "compiled"
            key = "torch_compile" if backend == "native-torch" else "jit_compile"
            assert settings[key] is compiled, (backend, mode, settings)
        if precision == "mixed_bfloat16":
            ran_in = settings["precision"]
            assert ran_in["asked"] == "mixed_bfloat16"
            assert ran_in["compute_dtype"] == "bfloat16", (backend, ran_in)
            assert ran_in["variable_dtype"] == "float32", (backend, ran_in)
        elif backend.startswith("keras-"):
            assert settings["precision"]["compute_dtype"] == "float32"
        flags = found["environment"]["cpu_precision_flags"]
        assert isinstance(flags, list)


def test_reduced_precision_costs_little_accuracy_and_the_speedups_are_tabled(workdir):
    found = pd.read_csv(workdir / "results/tables/speedups.csv")
    reduced = found[found["precision"] == "mixed_bfloat16"]
    assert len(reduced) == sum(1 for _, _, p, _ in cells() if p == "mixed_bfloat16")
    for row in reduced.to_dict("records"):
        assert abs(row["accuracy_change"]) <= ACCURACY_TOLERANCE, row
        assert row["speedup_ci_low"] <= row["speedup"] <= row["speedup_ci_high"]
    baselines = found.groupby(["model", "backend"])["baseline"].first().to_dict()
    assert baselines[("mlp", "keras-torch")] == "float32, compile=eager"
    assert baselines[("mlp", "keras-jax")] == "float32, compile=compiled"
    compiled = found[(found["compile"] == "compiled") & (found["backend"] == "keras-torch")]
    assert compiled["first_epoch_extra_seconds"].notna().all()
    shown = (workdir / "results/tables/speedups.md").read_text()
    assert "mixed_bfloat16, compiled" in shown and "float32, eager" in shown


def test_float16_runs_or_is_refused_with_its_reason(workdir):
    config = precision_config(precision=("mixed_float16",), compile_modes=("auto",))
    config["workloads"] = [dict(w, epochs=2) for w in config["workloads"] if w["model"] == "mlp"]
    write_config(workdir / FLOAT16_CONFIG, config)
    runs = matrix.runs(config)
    refused = {c["backend"]: c["reason"] for c in matrix.not_applicable_cells(config)}
    assert set(refused) == {"native-jax"}
    assert "loss scaling" in refused["native-jax"]
    targets = [run_json(r.dataset, r.model, r.backend, precision=r.precision) for r in runs]
    run_snakemake(workdir, *targets, "--configfile", FLOAT16_CONFIG, "-j2")
    for run in runs:
        found = json.loads(
            (
                workdir / run_json("digits", "mlp", run.backend, precision="mixed_float16")
            ).read_text()
        )
        assert found["status"] == "ok", (run.backend, found["error"])
        ran_in = found["settings"]["precision"]
        assert ran_in["compute_dtype"] == "float16", (run.backend, ran_in)
        assert ran_in.get("loss_scaling"), (run.backend, ran_in)
