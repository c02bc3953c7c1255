"""Like with like: runs whose hidden settings (their manifests) differ are
flagged wherever the tables set them side by side; records written before
the manifest say "not recorded" and are flagged too."""

import json

import pandas as pd

from dlbench.analysis import collect, hidden_settings, stats, tables
from dlbench.record import contract
from dlbench.run import manifest
from testkit import REPO

GPU_RUNS = REPO / "records" / "gpu" / "runs"
IEEE_CPU = {
    "float32_matmul": "ieee",
    "float32_convolution": "ieee",
    "float32_observed": "ieee",
    "cudnn_autotune": manifest.CPU_ONLY,
    "deterministic": False,
    "intra_op_threads": 2,
    "inter_op_threads": 1,
    "onednn_fpmath_mode": "strict",
    "denormals": "flushed",
}


def test_a_setting_off_its_best_value_is_named_and_the_rest_are_not():
    texts = hidden_settings.differing(
        {
            "torch": IEEE_CPU,
            "jax": dict(IEEE_CPU, deterministic="n/a (no such switch)"),
            "mxnet": dict(IEEE_CPU, denormals="kept"),
            "tf": dict(IEEE_CPU, deterministic=True),
            "old": None,
        }
    )
    assert texts == {
        "mxnet": "denormals kept (best: flushed)",
        "tf": "deterministic True (best: False)",
        "old": contract.NOT_RECORDED,
    }


def test_settings_without_a_best_value_are_compared_with_the_others():
    texts = hidden_settings.differing(
        {
            "a": IEEE_CPU,
            "b": IEEE_CPU,
            "c": dict(IEEE_CPU, intra_op_threads=1),
        }
    )
    assert texts == {"c": "intra_op_threads 1 (others: 2)"}
    # two against two: no usual value, both sides are named
    tie = hidden_settings.differing({"a": IEEE_CPU, "b": dict(IEEE_CPU, intra_op_threads=1)})
    assert set(tie) == {"a", "b"}


def test_tf32_runs_are_not_held_to_ieee():
    tf32 = dict(IEEE_CPU, float32_matmul="tf32", float32_convolution="tf32")
    assert hidden_settings.differing({"a": tf32}, hidden_settings.best_for("tf32")) == {}
    assert "float32_matmul tf32 (best: ieee)" in hidden_settings.differing({"a": tf32})["a"]


def record(backend, found_manifest):
    return {"settings": {"manifest": found_manifest} if found_manifest else {"jit": True}}


def test_a_record_gives_its_compared_settings_or_not_recorded():
    full = dict(IEEE_CPU, gpu_memory=manifest.CPU_ONLY, compile_mode="eager")
    text = hidden_settings.of_record(record("native-torch", full))
    assert json.loads(text) == IEEE_CPU  # only the compared settings
    assert hidden_settings.of_record(record("x", None)) == contract.NOT_RECORDED
    assert hidden_settings.of_record({"settings": None}) is None


def test_the_h200_records_written_before_the_manifest_are_flagged_everywhere(tmp_path):
    metrics = collect.metrics(collect.load_records(sorted(GPU_RUNS.rglob("run.json"))))
    assert set(metrics["manifest"].dropna()) == {contract.NOT_RECORDED}
    summary = collect.summary(metrics)
    ran = summary[summary["status"] == "ok"]
    assert len(ran) and set(ran[hidden_settings.COLUMN]) == {contract.NOT_RECORDED}
    table, _ = tables.workload_table(summary, "digits", "mlp")
    assert set(table["hidden settings differ"].dropna()) == {contract.NOT_RECORDED}
    pairs = stats.pairwise(metrics, collect.HEADLINE)
    assert len(pairs) and pairs["hidden_settings_differ"].str.contains("not recorded").all()
    listed = hidden_settings.table(metrics)
    assert set(listed["backend"]) == set(metrics["backend"])
    assert (listed["float32_matmul"] == contract.NOT_RECORDED).all()


def test_a_backend_set_apart_in_one_cell_is_flagged_in_that_cell_only():
    def row(backend, model, found):
        return {
            **{column: None for column in collect.CELL},
            "dataset": "digits",
            "model": model,
            "backend": backend,
            "precision": "float32",
            "manifest": json.dumps(found, sort_keys=True),
        }

    deterministic = dict(IEEE_CPU, deterministic=True)
    frame = pd.DataFrame(
        [
            row("keras-torch", "mlp", IEEE_CPU),
            row("native-torch", "mlp", deterministic),
            row("keras-torch", "cnn", IEEE_CPU),
            row("native-torch", "cnn", IEEE_CPU),
        ]
    )
    flagged = hidden_settings.flag(frame).set_index(["model", "backend"])[hidden_settings.COLUMN]
    assert flagged[("mlp", "native-torch")] == "deterministic True (best: False)"
    assert flagged.drop(("mlp", "native-torch")).isna().all()
