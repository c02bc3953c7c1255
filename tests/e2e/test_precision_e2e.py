"""Reduced precision in every backend that has it, beyond what the tests'
workflow runs (bfloat16 inference on LeNet, bfloat16 training on CIFAR-10's
CNN in native torch): training in mixed_bfloat16 and in mixed_float16 with
loss scaling, and what a CPU without the instructions a mode needs does with
it. Single runs through the supervisor on a few steps of the digits: what
ran is checked, not how well it learns."""

import json
import os
import subprocess

import numpy as np
import pytest

from dlbench import catalog
from dlbench.host import cpu_isa
from dlbench.plan import matrix, paths, run_spec
from dlbench.registry import BUILT_IN
from testkit import NOT_EXERCISED, RUN_TIMEOUT_S, copy_workflow, run_snakemake
from workflows import TEST_CONFIG, load_test_config, small_dataset, supervised_run

CONFIG = matrix.normalise(load_test_config())
# The cap that makes any CPU of this kind one without AVX-512 (an AMD EPYC of
# family 23): oneDNN runs no kernel above it (dlbench.host.cpu_isa).
AVX2_ONLY = {"DNNL_MAX_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def with_mode(precision, model="mlp", compile_mode="auto"):
    """Every backend that trains ``model`` and has ``precision`` at ``compile_mode``."""
    return [
        backend
        for backend in sorted(CONFIG["backends"])
        if not BUILT_IN.not_applicable(backend, "train", model=model)
        and not catalog.BACKENDS[backend].precision_not_applicable(precision)
        and not catalog.BACKENDS[backend].compile_not_applicable(compile_mode)
    ]


def spec_of(backend, precision, model, compile_mode="auto", epochs=1):
    # one thread, as every run of the tests' config: two, beside the session's
    # other work, wait on each other
    run = matrix.Run("digits", model, backend, precision=precision, compile=compile_mode, threads=1)
    spec = run_spec.spec(CONFIG, run).as_json()
    spec["hyper"] = dict(spec["hyper"], epochs=epochs)
    spec["hyper"].pop("train_samples", None)  # these runs train on small_digits, whole
    return spec


@pytest.fixture(scope="module")
def small_digits(built_workflow, tmp_path_factory):
    return small_dataset(built_workflow, tmp_path_factory.mktemp("data"))


@pytest.mark.parametrize("backend", with_mode("mixed_float16"))
def test_float16_computes_in_float16_with_loss_scaling(
    built_workflow, small_digits, backend, tmp_path
):
    """Each backend's float16 mode: Keras' policy with its LossScaleOptimizer,
    casts and dynamic loss scaling by hand in TensorFlow and JAX, autocast
    and GradScaler in torch, chainer.mixed16 with float32 master copies."""
    spec = spec_of(backend, "mixed_float16", "mlp", epochs=2)
    found = supervised_run(built_workflow, spec, tmp_path, data=small_digits)
    assert found["status"] == "ok", found["error"]
    ran_in = found["settings"]["precision"]
    assert ran_in["compute_dtype"] == "float16", ran_in
    assert ran_in.get("loss_scaling"), ran_in
    assert all(np.isfinite(epoch["loss"]) for epoch in found["epochs"])
    if backend == "native-chainer":
        assert ran_in["variable_dtype"].startswith("float16")


@pytest.mark.parametrize("backend", with_mode(catalog.TF32))
def test_tf32_is_asked_of_the_framework_and_read_back(
    built_workflow, small_digits, backend, tmp_path
):
    """Each backend with a TensorFloat-32 switch runs ``tf32`` with it on,
    says so as its framework reads it back, and computes float32 tensors;
    what a product computed is observed (IEEE on a CPU without TF32)."""
    found = supervised_run(
        built_workflow, spec_of(backend, catalog.TF32, "mlp"), tmp_path, data=small_digits
    )
    assert found["status"] == "ok", found["error"]
    ran_with = found["settings"]["manifest"]
    assert (ran_with["float32_matmul"], ran_with["float32_convolution"]) == ("tf32", "tf32")
    assert ran_with["float32_observed"] in ("ieee", "reduced (inputs rounded: tf32 or bf16)")
    assert ran_with["onednn_fpmath_mode"] == "tf32"
    assert found["precision"] == catalog.TF32 and all(
        np.isfinite(epoch["loss"]) for epoch in found["epochs"]
    )


def test_float16_is_refused_where_a_backend_has_none_with_its_reason():
    refused = {
        backend: catalog.BACKENDS[backend].precision_not_applicable("mixed_float16")
        for backend in CONFIG["backends"]
    }
    assert "CuDNN" in refused["native-mxnet"]
    assert "Keras 2" in refused["keras2-theano"] and "floatX" in refused["native-pytensor"]


def first_mode(backend):
    """The backend's eager mode, or its compiled one where it has no eager."""
    return next(
        m for m in ("eager", "compiled") if not catalog.BACKENDS[backend].compile_not_applicable(m)
    )


# The backends the tests' workflow trains a CNN of in bfloat16 (CIFAR-10's:
# convolutions and pooling); test_workflow_e2e.py checks what those runs computed in.
TRAINED_IN_THE_WORKFLOW = {
    run.backend
    for run in matrix.runs(CONFIG)
    if run.precision == "mixed_bfloat16"
    and matrix.workload(CONFIG, run.dataset, run.model).get("task", "train") == "train"
}


# One mode a backend: bfloat16 under a compiler is the MLP's, in the workflow.
@pytest.mark.parametrize(
    "backend",
    [
        backend
        for backend in with_mode("mixed_bfloat16", "cnn")
        if not catalog.BACKENDS[backend].precision_cpu_not_applicable("mixed_bfloat16")
        and backend not in TRAINED_IN_THE_WORKFLOW
    ],
)
def test_the_cnn_computes_in_bfloat16(built_workflow, small_digits, backend, tmp_path):
    """The CNN's convolutions and pooling in bfloat16: the record says
    bfloat16 compute, float32 variables, and the losses are finite."""
    spec = spec_of(backend, "mixed_bfloat16", "cnn", first_mode(backend))
    found = supervised_run(built_workflow, spec, tmp_path, data=small_digits)
    assert found["status"] == "ok", found["error"]
    ran_in = found["settings"]["precision"]
    assert (ran_in["compute_dtype"], ran_in["variable_dtype"]) == ("bfloat16", "float32")
    assert np.isfinite(found["test_loss"])


def test_on_a_cpu_without_avx512_mxnet_bfloat16_is_not_applicable_never_a_failure(
    built_workflow, small_digits, tmp_path
):
    """With oneDNN capped at AVX2 this CPU is one of family 23's kind: MXNet
    1.9 then has no bfloat16 kernels (its run fails with oneDNN's own
    error: the requirement is real), the workflow plans the cell as n/a
    with the reason, and a machine that runs a cell planned elsewhere
    records it unavailable before starting it."""
    spec = spec_of("native-mxnet", "mixed_bfloat16", "mlp")
    built_workflow.build(spec["initial_weights"])
    # the harness itself, past the supervisor's refusal: oneDNN refuses
    python = str(built_workflow.venv("native-mxnet") / "bin/python")
    record = tmp_path / "harness" / "run.json"
    record.parent.mkdir()
    done = subprocess.run(
        [
            python,
            "-m",
            "dlbench.run.harness",
            "--spec",
            json.dumps(spec),
            "--data",
            str(small_digits),
        ]
        + ["--record", str(record), "--epochs", str(record.with_name("epochs.csv"))],
        cwd=built_workflow.path,
        env=dict(os.environ, PYTHONPATH="src", OMP_NUM_THREADS="1", **AVX2_ONLY),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    failed = json.loads(record.read_text())
    assert done.returncode != 0 and failed["status"] == "failed"
    assert "could not create a primitive descriptor" in failed["error"], failed["error"]

    # the supervisor: unavailable, with the reason, no run started
    refused = supervised_run(built_workflow, spec, tmp_path / "supervised", env=AVX2_ONLY)
    assert refused["status"] == "unavailable" and "epochs" not in refused
    assert "needs AVX512_CORE" in refused["reason"] and "AVX2" in refused["reason"]

    # the plan from nothing: the cell is n/a, the others are planned
    plan = copy_workflow(tmp_path / "plan")
    planned = run_snakemake(
        plan, "-n", "--configfile", TEST_CONFIG, env=dict(os.environ, **AVX2_ONLY)
    ).stdout
    capped = set()
    for run in matrix.runs(CONFIG):
        if matrix.on_the_cpu(CONFIG, run._asdict()) and catalog.BACKENDS[
            run.backend
        ].precision_cpu_not_applicable(run.precision, environ=AVX2_ONLY):
            capped.add((run.backend, run.precision))
            assert paths.run_dir(run) not in planned, run
        else:
            assert paths.run_dir(run) + "/run.json" in planned, run
    # on a CPU without AVX-512 (Zen 3, say) the cap takes nothing more away:
    # those cells are n/a in the plan without it already
    capped |= {
        (cell["backend"], cell["precision"])
        for cell in matrix.not_applicable_cells(CONFIG)
        if cell["reason"].startswith("n/a on this CPU")
    }
    # OpenVINO's bfloat16 needs AVX-512 too: its LeNet cell is n/a as well
    assert capped == {("native-mxnet", "mixed_bfloat16"), ("keras-openvino", "mixed_bfloat16")}


def test_this_cpu_says_what_it_cannot_run():
    """What the summary of this session reports as not exercised here."""
    for backend in CONFIG["backends"]:
        for precision in catalog.PRECISIONS:
            reason = catalog.BACKENDS[backend].precision_cpu_not_applicable(precision)
            if reason and not catalog.BACKENDS[backend].precision_not_applicable(precision):
                NOT_EXERCISED["{} {}".format(backend, precision)] = reason
    described = cpu_isa.describe()
    assert described["onednn_level"] in cpu_isa.LEVEL_NAMES
