"""What the CPU's instructions allow, known before a run: oneDNN's levels
from the CPU's flags, the ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA cap, and
the cells a backend cannot compute on this CPU (n/a when planned here,
unavailable when the machine that runs them cannot)."""

import json

import pytest

from dlbench import catalog
from dlbench.host import cpu_isa, runtime
from dlbench.plan import matrix, run_spec
from dlbench.run import supervise

BASE = {"sse4_1", "avx", "fma", "f16c"}
# Flags of CPUs this project has run on (the ones cpu_isa reads)
ZEN2 = BASE | {"avx2"}  # AMD EPYC family 23: AVX2 only
ZEN4 = ZEN2 | {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_vnni", "avx512_bf16"}
SKYLAKE = ZEN2 | {"avx512f", "avx512bw", "avx512vl", "avx512dq"}
SAPPHIRE_RAPIDS = ZEN4 | {"avx512_fp16", "amx_tile", "amx_int8", "amx_bf16"}


@pytest.mark.parametrize(
    "flags, level",
    [
        (ZEN2, "AVX2"),
        (SKYLAKE, "AVX512_CORE"),
        (ZEN4, "AVX512_CORE_BF16"),
        (SAPPHIRE_RAPIDS, "AVX512_CORE_AMX"),
        (set(), None),
    ],
)
def test_the_level_is_the_highest_whose_flags_the_cpu_has(flags, level):
    assert cpu_isa.level(flags, environ={}) == level


def test_a_cap_lowers_the_level_under_either_name_the_lowest_winning():
    assert cpu_isa.level(ZEN4, {"DNNL_MAX_CPU_ISA": "avx2"}) == "AVX2"
    assert cpu_isa.level(ZEN4, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"}) == "AVX512_CORE"
    both = {"ONEDNN_MAX_CPU_ISA": "ALL", "DNNL_MAX_CPU_ISA": "AVX2"}
    assert cpu_isa.level(ZEN4, both) == "AVX2"
    assert cpu_isa.cap_environment(both) == {
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "DNNL_MAX_CPU_ISA": "AVX2",
    }
    # a cap never raises the level; ALL and names unknown here cap nothing
    assert cpu_isa.level(ZEN2, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_AMX"}) == "AVX2"
    assert cpu_isa.level(ZEN4, {"ONEDNN_MAX_CPU_ISA": "ALL"}) == "AVX512_CORE_BF16"
    assert cpu_isa.cap_environment({}) == {}
    assert cpu_isa.describe(ZEN4, {"DNNL_MAX_CPU_ISA": "AVX2"}) == {
        "onednn_level": "AVX2",
        "capped_by": "DNNL_MAX_CPU_ISA=AVX2",
    }


def test_what_is_missing_names_the_level_needed_and_the_cap():
    assert cpu_isa.missing("AVX512_CORE", ZEN4, {}) is None
    assert cpu_isa.missing("AVX512_CORE", ZEN2, {}) == (
        "needs AVX512_CORE; this CPU runs oneDNN kernels up to AVX2"
    )
    assert cpu_isa.missing("AVX512_CORE", ZEN4, {"DNNL_MAX_CPU_ISA": "AVX2"}) == (
        "needs AVX512_CORE; this CPU runs oneDNN kernels up to AVX2, "
        "capped by DNNL_MAX_CPU_ISA=AVX2"
    )


def test_mxnet_bfloat16_is_not_applicable_below_avx512_and_others_run_everywhere():
    """MXNet 1.9's oneDNN fails a bfloat16 layer below AVX-512 ("could not
    create a primitive descriptor iterator", measured on an AVX2 EPYC and
    with DNNL_MAX_CPU_ISA=AVX2); torch, TensorFlow and JAX emulate it."""
    reason = catalog.BACKENDS["native-mxnet"].precision_cpu_not_applicable(
        "mixed_bfloat16", ZEN2, {}
    )
    assert reason.startswith("n/a on this CPU (mixed_bfloat16 on mxnet needs AVX512_CORE")
    assert (
        catalog.BACKENDS["native-mxnet"].precision_cpu_not_applicable("mixed_bfloat16", SKYLAKE, {})
        is None
    )
    for backend in ("keras-torch", "keras-tensorflow", "keras-jax", "native-torch", "native-jax"):
        assert (
            catalog.BACKENDS[backend].precision_cpu_not_applicable("mixed_bfloat16", ZEN2, {})
            is None
        )
    # OpenVINO computes float16 only where the CPU has AVX512-FP16 (else bfloat16 or f32)
    assert catalog.BACKENDS["keras-openvino"].precision_cpu_not_applicable(
        "mixed_float16", ZEN4, {}
    )
    found = catalog.BACKENDS["keras-openvino"].precision_cpu_not_applicable(
        "mixed_float16", SAPPHIRE_RAPIDS, {}
    )
    assert found is None


def bfloat16_config(smoke_config, **changes):
    (mlp,) = [dict(w, repeats=1) for w in smoke_config["workloads"] if w["model"] == "mlp"]
    backends = {b: None for b in ("native-mxnet", "native-torch")}
    return dict(
        smoke_config,
        workloads=[mlp],
        backends=backends,
        precision=["float32", "mixed_bfloat16"],
        **changes,
    )


def test_a_cell_this_cpu_cannot_compute_is_planned_not_applicable(smoke_config, monkeypatch):
    config = bfloat16_config(smoke_config)
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")
    planned = {(run.backend, run.precision) for run in matrix.runs(config)}
    assert planned == {
        ("native-mxnet", "float32"),
        ("native-torch", "float32"),
        ("native-torch", "mixed_bfloat16"),
    }
    (cell,) = matrix.not_applicable_cells(config)
    assert (cell["backend"], cell["precision"]) == ("native-mxnet", "mixed_bfloat16")
    assert "needs AVX512_CORE" in cell["reason"] and "up to AVX2" in cell["reason"]
    has_avx512 = cpu_isa.missing("AVX512_CORE", environ={}) is None
    # the cap is named where it is what took the instructions away
    assert ("DNNL_MAX_CPU_ISA=AVX2" in cell["reason"]) == has_avx512, cell["reason"]
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "ALL")
    if has_avx512:  # the cell runs
        assert len(matrix.runs(config)) == 4 and matrix.not_applicable_cells(config) == []
    else:  # a CPU of family 23's kind, or Zen 3: n/a without the cap too
        assert len(matrix.runs(config)) == 3 and len(matrix.not_applicable_cells(config)) == 1


def test_a_machine_that_cannot_compute_a_planned_cell_records_it_unavailable(
    smoke_config, tmp_path, monkeypatch
):
    """A cluster's node may lack what the planning machine had: the
    supervisor refuses the run before it starts, with the reason."""
    config = bfloat16_config(smoke_config)
    run = matrix.Run("digits", "mlp", "native-mxnet", precision="mixed_bfloat16")
    spec = run_spec.spec(config, run)
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")
    record_path = tmp_path / "run.json"
    code = supervise.supervise(
        spec, "no-data.npz", str(record_path), str(tmp_path / "epochs.csv"), python="/no/python"
    )
    assert code == 0
    record = json.loads(record_path.read_text())
    assert record["status"] == "unavailable" and record["precision"] == "mixed_bfloat16"
    assert "needs AVX512_CORE" in record["reason"]


def test_unreadable_cpu_flags_are_the_reason_never_a_cpu_without_the_instructions(
    smoke_config, tmp_path, monkeypatch
):
    """Where /proc/cpuinfo cannot be read, the cell is n/a because the flags
    are not known, and says so with the error, in the matrix's table, in
    the record the supervisor writes and in the runtime a run records;
    a readable file is read as before."""
    readable = tmp_path / "cpuinfo"
    readable.write_text("processor\t: 0\nflags\t\t: {}\n".format(" ".join(sorted(ZEN2))))
    monkeypatch.setattr(cpu_isa, "CPUINFO", str(readable))
    assert cpu_isa.flags_unreadable() is None and cpu_isa.cpu_flags() == ZEN2
    assert cpu_isa.missing("AVX512_CORE", environ={}) == (
        "needs AVX512_CORE; this CPU runs oneDNN kernels up to AVX2"
    )

    unreadable = tmp_path / "unreadable"
    unreadable.mkdir()  # opening it fails: IsADirectoryError, an OSError
    monkeypatch.setattr(cpu_isa, "CPUINFO", str(unreadable))
    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    why = "this CPU's flags could not be read ([Errno 21] Is a directory: {!r})".format(
        str(unreadable)
    )
    assert cpu_isa.flags_unreadable() == why and cpu_isa.cpu_flags() == set()
    assert cpu_isa.missing("AVX512_CORE") == "needs AVX512_CORE; " + why
    assert "up to" not in cpu_isa.missing("AVX512_CORE")
    assert cpu_isa.missing("AVX512_CORE", environ={"DNNL_MAX_CPU_ISA": "AVX2"}) == (
        "needs AVX512_CORE; " + why + ", and capped by DNNL_MAX_CPU_ISA=AVX2"
    )
    # flags given are the caller's: they are read, not this machine's file
    assert cpu_isa.missing("AVX512_CORE", SKYLAKE, {}) is None

    config = bfloat16_config(smoke_config)
    (cell,) = matrix.not_applicable_cells(config)
    assert (cell["backend"], cell["precision"]) == ("native-mxnet", "mixed_bfloat16")
    assert cell["reason"] == (
        "n/a on this CPU (mixed_bfloat16 on mxnet needs AVX512_CORE; " + why + ")"
    )

    run = matrix.Run("digits", "mlp", "native-mxnet", precision="mixed_bfloat16")
    record_path = tmp_path / "run.json"
    code = supervise.supervise(
        run_spec.spec(config, run),
        "no-data.npz",
        str(record_path),
        str(tmp_path / "epochs.csv"),
        python="/no/python",
    )
    assert code == 0
    record = json.loads(record_path.read_text())
    assert record["status"] == "unavailable" and why in record["reason"]

    observed = runtime.observed(1, [0])
    assert observed["cpu_flags_unreadable"] == why
    assert observed["cpu_precision_flags"] == []
    assert observed["cpu_isa"]["onednn_level"] is None
