"""Matrix expansion and the per-run spec handed to the harness."""

import pytest

from dlbench import catalog
from dlbench.models import workloads as workload_registry
from dlbench.plan import comparisons, config_rules, matrix, paths, run_spec
from dlbench.registry import BUILT_IN

KERAS3 = {"keras-tensorflow", "keras-jax", "keras-torch"}
LEGACY = {"keras2-theano", "keras2-cntk", "keras-mxnet"}
# Those with cells on the CPU (native-cudnn computes on GPUs only).
NATIVE = {
    backend
    for backend, entry in catalog.BACKENDS.items()
    if backend.startswith("native-") and "gpu_only" not in entry
}
NATIVE3 = {"native-tensorflow", "native-jax", "native-torch"}


def implementing(backends, model):
    return {b for b in backends if model in BUILT_IN.models_of(b)}


def test_smoke_matrix_is_workloads_by_backends_by_devices_by_repeats(smoke_config):
    runs = matrix.runs(smoke_config)
    # mlp (three repeats: its own `repeats`), cnn on Keras 3, the legacy
    # systems and every native backend; lenet on those and OpenVINO;
    # cifar_cnn, imdb_gru, babi_rnn on Keras 3 and the native tensorflow, jax
    # and torch that implement them (imdb_gru on native-cntk too); resnet50 too,
    # and on OpenVINO; the example model of your own on Keras 3 (native-torch: n/a)
    others = ("cifar_cnn", "imdb_gru", "babi_rnn", "resnet50")
    assert smoke_config["repeats"] == 1 and smoke_config["workloads"][0]["repeats"] == 3
    assert (
        len(runs)
        == 3 * 13 + 13 + 14 + sum(3 + len(implementing(NATIVE3, model)) for model in others) + 2 + 3
    )
    assert {run.backend for run in runs if run.model == "imdb_transformer"} == KERAS3
    assert {run.repeat for run in runs if run.model == "mlp"} == {1, 2, 3}
    assert {run.repeat for run in runs if run.model != "mlp"} == {1}
    # how often a cell runs is not a hyper-parameter: it changes no run
    third = run_spec.spec(
        smoke_config, matrix.Run("digits", "mlp", "keras-jax", devices=0, repeat=3)
    )
    assert "repeats" not in third.hyper and third.seed == smoke_config["seed"] + 2
    assert len(set(runs)) == len(runs)
    assert {run.backend for run in runs if run.model == "mlp"} == KERAS3 | LEGACY | NATIVE
    assert {run.backend for run in runs if run.model == "lenet"} == (
        KERAS3 | LEGACY | NATIVE | {"keras-openvino"}
    )
    assert {run.backend for run in runs if run.model == "babi_rnn"} == KERAS3 | implementing(
        NATIVE3, "babi_rnn"
    )


def test_cells_a_backend_cannot_run_are_not_applicable_not_run(smoke_config):
    cells = matrix.not_applicable_cells(smoke_config)
    openvino = [c for c in cells if c["backend"] == "keras-openvino"]
    assert {c["model"] for c in openvino} == {"mlp", "cnn", "cifar_cnn", "imdb_gru", "babi_rnn"}
    assert {c["reason"] for c in openvino} == {"n/a (inference only)"}
    (own,) = [c for c in cells if c["model"] == "imdb_transformer"]
    assert own["backend"] == "native-torch" and own["reason"] == (
        "n/a (imdb_transformer is a Keras model of your own, from examples/imdb_transformer.py: "
        "it runs on Keras backends only)"
    )
    for cell in cells:
        if cell["backend"] != "keras-openvino" and cell is not own:
            family = catalog.BACKENDS[cell["backend"]]["family"]
            assert cell["model"] not in BUILT_IN.models_of(cell["backend"])
            assert cell[
                "reason"
            ] == "n/a ({0} has no {1} yet: dlbench/models/workloads/{1}/in_{0}.py)".format(
                family, cell["model"]
            )


def test_a_workload_a_framework_computes_wrongly_is_shown_with_what_was_measured(full_config):
    (cell,) = [
        c
        for c in matrix.not_applicable_cells(full_config)
        if (c["backend"], c["model"]) == ("keras-mxnet", "hrnn")
    ]
    assert "returns zeros" in cell["reason"] and "does not bind" in cell["reason"]
    assert not [
        r for r in matrix.runs(full_config) if (r.backend, r.model) == ("keras-mxnet", "hrnn")
    ]


def test_workload_no_backend_can_run_is_refused(smoke_config):
    smoke_config["workloads"][0]["backends"] = ["keras-openvino"]
    with pytest.raises(matrix.ConfigError, match=r"workloads\[0\].backends: no backend"):
        config_rules.validate(smoke_config)


def test_existing_environments_are_named_by_backend_or_environment(smoke_config):
    smoke_config["existing_environments"] = {"native-torch": "/x/python", "keras-jax.cuda": "/y"}
    config_rules.validate(smoke_config)
    assert run_spec.existing_python(smoke_config, "native-torch.cuda") == "/x/python"
    assert run_spec.existing_python(smoke_config, "keras-jax.cuda") == "/y"
    assert run_spec.existing_python(smoke_config, "keras-jax") is None
    smoke_config["existing_environments"] = {"native-caffe": "/z"}
    with pytest.raises(matrix.ConfigError, match="existing_environments.native-caffe: not a"):
        config_rules.validate(smoke_config)


def test_existing_mode_needs_an_interpreter_for_every_environment(smoke_config):
    smoke_config.update(env_mode="existing", existing_environments={"native-torch": "/x"})
    with pytest.raises(
        matrix.ConfigError,
        match="env_mode: existing.*; keras-jax, keras-mxnet, .* native-tensorflow have none",
    ):
        config_rules.validate(smoke_config)
    smoke_config["existing_environments"] = {b: "/x" for b in smoke_config["backends"]}
    config_rules.validate(smoke_config)


def test_shared_weights_in_existing_mode_need_keras_on_torch(smoke_config):
    (mlp,) = [entry for entry in smoke_config["workloads"] if entry["model"] == "mlp"]
    smoke_config.update(
        env_mode="existing",
        existing_environments={"native-torch": "/x"},
        backends={"native-torch": None},
        workloads=[dict(mlp, backends=["native-torch"])],
    )
    with pytest.raises(matrix.ConfigError, match="initial_weights: shared .* keras-torch"):
        config_rules.validate(smoke_config)
    config_rules.validate(dict(smoke_config, initial_weights="own"))
    smoke_config["existing_environments"]["keras-torch"] = "/y"
    config_rules.validate(smoke_config)


def test_the_compilation_cache_is_a_setting_of_jax_backends_only(smoke_config):
    smoke_config["backends"]["keras-jax"] = {"jit_compile": True, "compilation_cache": True}
    smoke_config["workloads"][0]["backend_settings"] = {"native-jax": {"compilation_cache": True}}
    config_rules.validate(smoke_config)
    (run,) = [
        run
        for run in matrix.runs(smoke_config)
        if run.backend == "keras-jax" and run.repeat == 1 and run.model == "mlp"
    ]
    assert run_spec.spec(smoke_config, run).backend_settings["compilation_cache"] is True
    smoke_config["workloads"][0]["backend_settings"] = {"native-torch": {"compilation_cache": True}}
    with pytest.raises(
        matrix.ConfigError,
        match=r"workloads\[0\].backend_settings.native-torch.compilation_cache: .* on torch",
    ):
        config_rules.validate(smoke_config)


def test_theano_and_pytensor_alone_take_g_plus_plus_flags(smoke_config):
    smoke_config["backends"]["keras2-theano"] = {"cxxflags": "-O1"}
    smoke_config["backends"]["native-pytensor"] = {"cxxflags": "-O1 -march=x86-64-v3"}
    config_rules.validate(smoke_config)
    smoke_config["backends"]["keras-mxnet"] = {"cxxflags": "-O1"}
    with pytest.raises(matrix.ConfigError, match=r"backends.keras-mxnet.cxxflags: .* on mxnet"):
        config_rules.validate(smoke_config)
    smoke_config["backends"]["keras-mxnet"] = {"precompiled_headers": True}
    with pytest.raises(
        matrix.ConfigError, match=r"backends.keras-mxnet.precompiled_headers: .* on mxnet"
    ):
        config_rules.validate(smoke_config)


def test_training_runs_share_initial_weights_per_workload_and_seed(smoke_config):
    def spec(model, backend, repeat=1):
        run = matrix.Run("digits", model, backend, devices=0, repeat=repeat)
        return run_spec.spec(smoke_config, run)

    assert spec("mlp", "keras-jax").initial_weights == "results/weights/digits/mlp/seed42.npz"
    assert spec("mlp", "native-torch").initial_weights == spec("mlp", "keras-jax").initial_weights
    assert spec("mlp", "keras-jax", 3).initial_weights.endswith("/seed44.npz")
    trained = "results/weights/digits/lenet/trained_seed42.npz"  # inference: trained_weights
    assert spec("lenet", "keras-jax").initial_weights == trained
    smoke_config["initial_weights"] = "own"
    assert spec("mlp", "keras-jax").initial_weights is None
    assert "initial_weights" not in spec("mlp", "keras-jax").as_json()


def test_full_matrix(full_config):
    """Every training workload on the 6 Keras backends that train, every
    inference workload on 7 (OpenVINO infers), each native backend on the
    workloads it implements; 3 repeats, the CPU only (native-cudnn's LeNet:
    n/a)."""
    runs = matrix.runs(full_config)
    workloads = [(w["dataset"], w["model"], w["task"]) for w in full_config["workloads"]]
    cells = 0
    for _, model, task in workloads:
        cells += 6 if task == "train" else 7
        cells -= model == "hrnn"  # keras-mxnet cannot run it (hrnn: CANNOT_RUN)
        cells += sum(model in BUILT_IN.models_of(backend) for backend in NATIVE)
    assert len(runs) == cells * 1 * 3
    assert {(run.dataset, run.model) for run in runs} == {(d, m) for d, m, _ in workloads}
    assert {model for _, model, _ in workloads} == set(workload_registry.built_in())


def test_workload_may_restrict_backends(smoke_config):
    every = len(matrix.runs(smoke_config))
    smoke_config["workloads"][0]["backends"] = ["keras-jax"]
    runs = matrix.runs(smoke_config)
    assert {run.backend for run in runs if run.model == "mlp"} == {"keras-jax"}
    repeats = smoke_config["workloads"][0]["repeats"]
    assert len(runs) == every - repeats * 13 + repeats


def test_run_dir_layout():
    run = matrix.Run("mnist", "mlp", "keras-jax", devices=0, threads=4, repeat=2, machine="lab-a")
    assert paths.run_dir(run) == (
        "results/runs/lab-a/mnist/mlp/keras-jax/devices=0/threads=4/"
        "precision=float32/compile=auto/versions=pinned/rep2"
    )


def test_spec_carries_the_hyper_parameters_and_a_seed_per_repeat(smoke_config):
    first = run_spec.spec(
        smoke_config, matrix.Run("digits", "mlp", "keras-jax", devices=0, repeat=1)
    )
    second = run_spec.spec(
        smoke_config, matrix.Run("digits", "mlp", "keras-torch", devices=0, repeat=2)
    )
    assert first.hyper == {
        "batch_size": 128,
        "epochs": 4,
        "loss": "categorical_crossentropy",
        "optimizer": {
            "name": "rmsprop",
            "learning_rate": 0.001,
            "rho": 0.9,
            "epsilon": 1e-7,
            "momentum": 0.0,
            "centered": False,
        },
    }
    assert first.seed == 42 and second.seed == 43
    assert first.backend_settings == {"jit_compile": True}


def test_spec_of_one_workload_ignores_the_others(smoke_config):
    run = matrix.Run("digits", "mlp", "keras-jax", devices=0, repeat=1)
    before = run_spec.spec(smoke_config, run)
    smoke_config["workloads"][1]["epochs"] = 99
    assert run_spec.spec(smoke_config, run) == before


def digits_only(config, models=("mlp", "cnn")):
    """The smoke config cut to the digits training workloads."""
    config["workloads"] = [w for w in config["workloads"] if w["model"] in models]
    config["equivalence_check"] = dict(config["equivalence_check"], workloads=None)
    config.pop("custom_models", None)
    return config


def test_precision_and_compile_are_dimensions_like_devices_and_threads(smoke_config):
    config = digits_only(smoke_config, ("mlp",))
    config.update(repeats=1, precision=["float32", "mixed_bfloat16"], compile=["eager", "compiled"])
    config["workloads"][0]["repeats"] = 1
    config_rules.validate(config)
    runs = matrix.runs(config)
    ran = {(r.backend, r.precision, r.compile) for r in runs}
    # Keras 3 on TensorFlow and torch, native torch: every combination
    for backend in ("keras-tensorflow", "keras-torch", "native-torch"):
        assert {(p, c) for b, p, c in ran if b == backend} == {
            (p, c) for p in ("float32", "mixed_bfloat16") for c in ("eager", "compiled")
        }
    # JAX only compiled; the legacy systems only float32, CNTK at no mode
    assert {(p, c) for b, p, c in ran if b == "keras-jax"} == {
        ("float32", "compiled"),
        ("mixed_bfloat16", "compiled"),
    }
    # the static-graph engines (Theano, CNTK, keras-mxnet's executors) only compiled
    for backend in ("keras2-theano", "keras2-cntk", "native-cntk", "keras-mxnet"):
        assert {(p, c) for b, p, c in ran if b == backend} == {("float32", "compiled")}
    assert {(p, c) for b, p, c in ran if b == "native-chainer"} == {("float32", "eager")}
    # every cell of the product is run or shown n/a with its reason, never both
    shown = {
        (c["backend"], c["precision"], c["compile"]): c["reason"]
        for c in matrix.not_applicable_cells(config)
    }
    assert len(ran) + len(shown) == len(config["backends"]) * 2 * 2 and not ran & set(shown)
    assert shown[("keras-jax", "float32", "eager")].startswith("n/a (eager: JAX runs compiled")
    assert shown[("keras2-theano", "mixed_bfloat16", "compiled")] == (
        "n/a (mixed_bfloat16: " + catalog.KERAS2_PRECISION + ")"
    )
    assert shown[("native-chainer", "float32", "compiled")] == (
        "n/a (compiled: Chainer is define-by-run: it has no compiler)"
    )
    assert "no eager mode" in shown[("keras2-cntk", "float32", "eager")]
    # the path names every dimension
    run = next(r for r in runs if (r.backend, r.precision) == ("keras-torch", "mixed_bfloat16"))
    assert "/precision=mixed_bfloat16/compile={}/".format(run.compile) in paths.run_dir(run)


def test_a_compile_mode_sets_the_backends_jit_and_auto_keeps_the_configs(smoke_config):
    def settings(model, backend, mode):
        run = matrix.Run("digits", model, backend, devices=0, compile=mode, repeat=1)
        return run_spec.spec(smoke_config, run).backend_settings

    # the smoke turns XLA off for the cnn on TensorFlow, on for the mlp
    assert settings("cnn", "keras-tensorflow", "auto") == {"jit_compile": False}
    assert settings("mlp", "keras-tensorflow", "auto") == {"jit_compile": True}
    assert settings("cnn", "keras-tensorflow", "compiled") == {"jit_compile": True}
    assert settings("mlp", "keras-tensorflow", "eager") == {"jit_compile": False}
    assert settings("mlp", "native-torch", "compiled") == {"jit_compile": True}
    assert settings("mlp", "native-mxnet", "eager") == {"hybridize": False}
    spec = run_spec.spec(smoke_config, matrix.Run("digits", "mlp", "keras-torch", repeat=1))
    assert (spec.precision, spec.compile) == ("float32", "auto")


def test_the_equivalence_check_runs_in_float32_at_a_mode_each_backend_has(smoke_config):
    config = digits_only(smoke_config, ("mlp",))
    config.update(precision=["mixed_bfloat16", "float32"], compile=["eager", "compiled"])
    checks = {run.backend: run for run in comparisons.check_runs(config)}
    assert {run.precision for run in checks.values()} == {"float32"}
    assert checks["keras-torch"].compile == "eager" and checks["keras-jax"].compile == "compiled"
    assert checks["keras2-cntk"].compile == "compiled"  # a static graph: no eager mode


def test_a_config_where_no_backend_has_the_mode_names_every_reason(smoke_config):
    config = digits_only(smoke_config, ("mlp",))
    config["backends"] = {"keras2-cntk": None, "native-cntk": None}
    config["workloads"][0].pop("backends", None)
    config["precision"] = "mixed_float16"
    with pytest.raises(matrix.ConfigError) as refused:
        config_rules.validate(config)
    message = str(refused.value)
    assert "precision ['mixed_float16']" in message
    assert catalog.KERAS2_PRECISION in message and "CNTK 2.7" in message


def test_a_workload_may_set_its_own_values_of_a_dimension(smoke_config):
    """A workload's own ``precision``, ``compile``, ``devices`` or
    ``threads`` replace the config's for its cells only (the tests' config
    sweeps precision on the MLP and devices on the CNN, not both on all)."""
    config = digits_only(smoke_config, ("mlp", "cnn", "lenet"))
    config.update(accelerator="emulated-cpu", backends={"keras-torch": None, "native-torch": None})
    mlp, cnn, lenet = config["workloads"]
    mlp.update(repeats=1, precision=["float32", "mixed_bfloat16"], compile=["eager", "compiled"])
    cnn.update(devices=[0, 1, 2], threads=[1, 2])
    config_rules.validate(config)
    runs = matrix.runs(config)
    settings = {
        model: {(r.precision, r.compile, r.devices, r.threads) for r in runs if r.model == model}
        for model in ("mlp", "cnn", "lenet")
    }
    assert settings["mlp"] == {
        (p, c, 0, "all") for p in ("float32", "mixed_bfloat16") for c in ("eager", "compiled")
    }
    assert settings["cnn"] == {("float32", "auto", d, t) for d in (0, 1, 2) for t in (1, 2)}
    assert settings["lenet"] == {("float32", "auto", 0, "all")}
    assert "precision" not in run_spec.spec(config, runs[0]).hyper  # not a hyper-parameter
    assert matrix.plots(config, cnn) == ["epoch_time", "convergence", "scaling", "threads_scaling"]
    assert matrix.plots(config, mlp) == ["epoch_time", "convergence"]
    assert matrix.plots(config, lenet) == ["latency", "throughput"]
    assert comparisons.modes_compared(config)
    assert matrix.every_dimension_value(config, "devices") == [0, 1, 2]
    cnn["devices"] = [0, 3]
    with pytest.raises(matrix.ConfigError, match=r"workloads\[1\]\.devices\[1\]: 3 devices"):
        config_rules.validate(config)


def test_exclude_leaves_out_the_cells_it_names_and_says_so(smoke_config):
    left_out = {"backend": "keras-torch", "compile": "compiled"}
    config = dict(smoke_config, compile=["eager", "compiled"], exclude=[left_out])
    config_rules.validate(config)
    modes = {(run.backend, run.compile) for run in matrix.runs(config) if run.model == "mlp"}
    assert ("keras-torch", "compiled") not in modes
    assert {("keras-torch", "eager"), ("native-torch", "compiled")} <= modes
    reasons = {
        cell["reason"]
        for cell in matrix.not_applicable_cells(config)
        if cell["backend"] == "keras-torch" and cell["compile"] == "compiled"
    }
    assert reasons == {
        "n/a (left out by the config: exclude backend=keras-torch, compile=compiled)"
    }


@pytest.mark.parametrize(
    "item, compile_modes",
    [
        ({"backend": "keras-torch", "compile": "compiled"}, "auto"),  # not a mode of the config
        ({"backend": "native-chainer", "compile": "compiled"}, ["eager", "compiled"]),  # n/a
        ({"model": "mlp", "dataset": "cifar10_tiny"}, "auto"),  # not a workload of the config
    ],
)
def test_an_exclusion_that_leaves_out_no_cell_is_refused(smoke_config, item, compile_modes):
    excluded = [{"backend": "keras-jax", "model": "mlp"}, item]
    config = dict(smoke_config, compile=compile_modes, exclude=excluded)
    with pytest.raises(matrix.ConfigError, match=r"exclude\[1\]: .* matches no cell"):
        config_rules.validate(config)


def test_an_exclusion_may_leave_out_a_check_alone(smoke_config):
    """Keras 2 on Theano trains the CNN on one device only, which the smoke
    does not sweep: its one CNN job is the equivalence check, and an item
    naming it leaves that out (the tests' config does)."""
    cnn = matrix.workload(smoke_config, "digits", "cnn")
    config = dict(
        smoke_config,
        workloads=[dict(cnn, devices=[2])],
        exclude=[{"backend": "keras2-theano", "model": "cnn"}],
    )
    unexcluded = dict(config, exclude=[])
    assert not [run for run in matrix.runs(unexcluded) if run.backend == "keras2-theano"]
    checked = {run.backend for run in comparisons.check_runs(unexcluded)}
    assert "keras2-theano" in checked
    config_rules.validate(config)
    assert {run.backend for run in comparisons.check_runs(config)} == checked - {"keras2-theano"}


def test_a_run_has_a_field_per_dimension_with_the_dimensions_defaults():
    """Run is typed field by field; a dimension added to DIMENSIONS without its
    field (or with another default) would give runs that lack it."""
    dimensions = matrix.Run._fields[3 : 3 + len(matrix.DIMENSIONS)]
    assert dimensions == matrix.DIMENSION_NAMES
    assert matrix.Run._fields == ("dataset", "model", "backend") + dimensions + (
        "repeat",
        "machine",
    )
    defaults = {name: matrix.Run._field_defaults[name] for name in dimensions}
    assert defaults == {d.name: d.default for d in matrix.DIMENSIONS}


def test_a_time_to_accuracy_workload_runs_its_seeds_and_evaluates_on_its_steps(smoke_config):
    mlp = smoke_config["workloads"][0]
    mlp["time_to_accuracy"] = {"target": 0.85, "evaluate_every": 4, "seeds": 5}
    config_rules.validate(smoke_config)
    runs = [r for r in matrix.runs(smoke_config) if r.model == "mlp" and r.backend == "keras-jax"]
    assert sorted({int(run.repeat) for run in runs}) == [1, 2, 3, 4, 5]
    spec = run_spec.spec(smoke_config, runs[-1])
    assert (spec.seed, spec.evaluate_every) == (smoke_config["seed"] + 4, 4)
    assert "time_to_accuracy" not in spec.hyper
    assert run_spec.check_spec(smoke_config, runs[0]).evaluate_every is None
    cnn = [r for r in matrix.runs(smoke_config) if r.model == "cnn" and r.backend == "keras-jax"]
    assert run_spec.spec(smoke_config, cnn[0]).evaluate_every is None
    assert "evaluate_every" not in run_spec.spec(smoke_config, cnn[0]).as_json()


@pytest.mark.parametrize(
    "index, chosen, refusal",
    [
        (2, {"target": 0.9, "evaluate_every": 4}, "only a training workload"),
        (7, {"target": 0.9, "evaluate_every": 4}, "only a training workload"),
        (0, {"target": 1.5, "evaluate_every": 4}, r"target: 1.5 is no validation accuracy"),
        (
            0,
            {"target": {"reference": "keras-openvino"}, "evaluate_every": 4},
            r"target.reference: 'keras-openvino' does not train digits/mlp",
        ),
    ],
)
def test_a_time_to_accuracy_that_cannot_be_measured_is_refused(
    smoke_config, index, chosen, refusal
):
    smoke_config["workloads"][index]["time_to_accuracy"] = chosen
    key = r"workloads\[{}\].time_to_accuracy".format(index)
    with pytest.raises(matrix.ConfigError, match=key + r".*" + refusal):
        config_rules.validate(smoke_config)
