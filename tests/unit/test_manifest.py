"""The manifest's probes tell IEEE float32 from inputs rounded to
TensorFloat-32 or bfloat16, and flushed denormals from kept ones; the
frameworks without a switch report their float32 as IEEE, observed."""

import numpy as np
import pytest

from dlbench import catalog
from dlbench.record import contract
from dlbench.run import manifest


def rounded(x, mantissa_bits):
    """float32 values with their mantissa rounded to ``mantissa_bits`` bits
    (TF32: 10, bfloat16: 7), as tensor cores read their inputs."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    drop = 23 - mantissa_bits
    half = 1 << (drop - 1)
    kept = ((bits + half - 1 + ((bits >> drop) & 1)) >> drop) << drop  # to nearest, ties to even
    return kept.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("bits", [10, 7])
def test_the_product_probe_tells_reduced_inputs_from_ieee(bits):
    a, b, _ = manifest.probe_inputs(np)
    assert manifest.arithmetic((a @ b)[0, 0]) == "ieee"
    assert manifest.arithmetic((rounded(a, bits) @ rounded(b, bits))[0, 0]).startswith("reduced")


def test_the_denormal_probe():
    _, _, tiny = manifest.probe_inputs(np)
    product = (tiny * np.float32(1e-3))[0]
    assert 0 < product < np.finfo(np.float32).tiny  # numpy keeps denormals
    assert manifest.denormals(product) == "kept" and manifest.denormals(0.0) == "flushed"


def test_precision_modes():
    assert manifest.float32_mode(catalog.FLOAT32) == "ieee"
    assert manifest.float32_mode(catalog.TF32) == "tf32"
    assert manifest.float32_mode("mixed_bfloat16") == "ieee"  # its float32 operations
    assert not catalog.mixed(catalog.TF32) and catalog.mixed("mixed_float16")


def test_a_host_framework_reports_observed_ieee_and_its_threads(monkeypatch):
    monkeypatch.delenv(manifest.ONEDNN_FPMATH, raising=False)
    found = manifest.host_manifest("NumPy", 2, "define-by-run")
    assert found["float32_observed"] == "ieee" and found["denormals"] == "kept"
    assert found["onednn_fpmath_mode"] == "strict" and found["intra_op_threads"] == 2
    assert found["deterministic"].startswith("n/a")
    assert set(manifest.COMPARED) <= set(found) <= set(manifest.SETTINGS)


def test_tf32_is_a_precision_only_where_a_framework_has_the_switch():
    assert catalog.BACKENDS["native-torch"].precision_not_applicable(catalog.TF32) is None
    assert catalog.BACKENDS["keras-jax"].precision_not_applicable(catalog.TF32) is None
    reason = catalog.BACKENDS["native-mxnet"].precision_not_applicable(catalog.TF32)
    assert reason.startswith("n/a (tf32: mxnet has no switch")


def test_the_reasons_a_manifest_writes_are_not_settings_to_compare():
    """The writer (run.manifest) and the reader (analysis.hidden_settings) share
    the contract's texts: a reason written is never compared as a setting."""

    def missing_switch():
        raise AttributeError("no such switch")

    unread = manifest._read(missing_switch)
    assert unread == "not read (AttributeError: no such switch)"
    for reason in (manifest.CPU_ONLY, manifest.not_applicable("no compiler"), unread):
        assert not contract.is_setting(reason)
    for setting in ("ieee", "strict", True, 4, None):
        assert contract.is_setting(setting)
