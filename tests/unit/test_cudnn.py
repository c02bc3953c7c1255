"""native-cudnn without a GPU: where its cells are n/a and why, how its
libraries are found (or why not), and what its implementation costs in lines
of code. Its computation runs only on a GPU (benchmarks/cudnn_lenet.py and
the GPU campaign check it against PyTorch there)."""

from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from dlbench import catalog
from dlbench.models import lines
from dlbench.models.layers import cudnn_layers
from dlbench.plan import matrix
from dlbench.registry import BUILT_IN
from dlbench.run.backends import native_cudnn_adapter
from testkit import REPO

GPU_ONLY = "n/a (cuDNN computes on NVIDIA GPUs only)"


def test_its_lenet_runs_on_a_gpu_only_and_every_other_cell_says_why(full_config):
    full_config["devices"] = [0, 1]
    cells = [c for c in matrix.not_applicable_cells(full_config) if c["backend"] == "native-cudnn"]
    lenet = {(c["devices"], c["reason"]) for c in cells if c["model"] == "lenet"}
    assert lenet == {(0, GPU_ONLY)}
    trained = {c["reason"] for c in cells if c["task"] == "train"}
    assert trained == {"n/a (inference only)"}
    runs = [run for run in matrix.runs(full_config) if run.backend == "native-cudnn"]
    assert [(run.model, run.devices, run.precision) for run in runs[:1]] == [
        ("lenet", 1, "float32")
    ]
    assert {run.repeat for run in runs} == {1, 2, 3} and len(runs) == 3
    assert BUILT_IN.not_applicable("native-cudnn", "infer", 1, "emulated-cpu") == GPU_ONLY
    assert catalog.BACKENDS["native-cudnn"].precision_not_applicable("mixed_bfloat16") == (
        "n/a (mixed_bfloat16: the cuDNN LeNet is written in float32 only)"
    )
    assert (
        catalog.BACKENDS["native-cudnn"]
        .compile_not_applicable("compiled")
        .startswith("n/a (compiled")
    )


def test_a_cpu_config_plans_no_cudnn_run_and_no_cudnn_environment(full_config):
    assert not [run for run in matrix.runs(full_config) if run.backend == "native-cudnn"]
    assert catalog.BACKENDS["native-cudnn"].environment(1, "gpu") == "native-cudnn.cuda"


def test_the_gpu_config_runs_cudnn_lenet_beside_the_frameworks():
    with open(REPO / "config" / "gpu.yaml") as handle:
        config = yaml.safe_load(handle)
    runs = [run for run in matrix.runs(config) if run.backend == "native-cudnn"]
    assert [(run.model, run.devices, run.compile) for run in runs] == [("lenet", 1, "eager")]


def test_the_libraries_are_found_in_pips_wheels_before_the_toolkit(tmp_path):
    site = tmp_path / "site"
    for folder, name in (
        ("nvidia/cudnn/lib", "libcudnn.so.9"),
        ("nvidia/cu13/lib", "libcublas.so.13"),
    ):
        (site / folder).mkdir(parents=True)
        (site / folder / name).write_bytes(b"")
    (site / "nvidia/cu13/lib/libcublasLt.so.13").write_bytes(b"")
    folders = cudnn_layers.library_folders([str(site), str(tmp_path / "elsewhere")])
    assert folders[:2] == [str(site / "nvidia/cudnn/lib"), str(site / "nvidia/cu13/lib")]
    assert cudnn_layers.find_library("libcudnn", folders) == str(
        site / "nvidia/cudnn/lib/libcudnn.so.9"
    )
    # libcublas, not libcublasLt
    assert cudnn_layers.find_library("libcublas", folders).endswith("/libcublas.so.13")
    assert cudnn_layers.find_library("libcudnn", [str(tmp_path / "elsewhere")]) is None


def test_missing_libraries_are_named_with_where_they_were_looked_for(tmp_path):
    with pytest.raises(OSError, match=r"libcublas and libcudnn not found in \[.*empty") as found:
        cudnn_layers.Libraries.load([str(tmp_path / "empty")])
    assert "nvidia-cudnn and nvidia-cublas wheels, or the CUDA toolkit" in str(found.value)


def test_versions_are_read_the_way_each_library_encodes_them():
    assert native_cudnn_adapter._dotted(91900) == "9.19.0"  # cuDNN 9: major*10000
    assert native_cudnn_adapter._dotted(130100) == "13.1.0"  # cuBLAS
    assert native_cudnn_adapter._dotted(13000, cuda=True) == "13.0"


def test_the_cudnn_lenet_counts_every_call_it_writes_out():
    """The comparison source 004 made: cuDNN's LeNet takes several times the
    lines of the frameworks' (descriptors, algorithms, workspaces, the
    libraries' C functions declared)."""
    cudnn = lines.count("native-cudnn", "lenet", "infer", BUILT_IN)
    torch = lines.count("native-torch", "lenet", "infer", BUILT_IN)
    keras = lines.count("keras-tensorflow", "lenet", "infer", BUILT_IN)
    assert cudnn["model_lines"] > 5 * max(torch["model_lines"], keras["model_lines"])
    assert cudnn["lines"] > torch["lines"] and cudnn["lines"] > keras["lines"]


def test_the_shared_weights_load_in_cudnns_layout_every_shape_checked_first():
    """The loader's conversion, with NumPy holding the arrays CuPy holds on
    a GPU (the copies are all it asks of CuPy)."""
    rng = np.random.RandomState(0)
    keras = [
        ("Conv2D", (5, 5, 1, 20), None),
        ("Conv2D", (5, 5, 20, 50), None),
        ("Dense", (800, 500), [4, 4, 50]),
        ("Dense", (500, 10), None),
    ]
    layout, weights = {"weights": []}, []
    for index, (keras_class, shape, flattened_from) in enumerate(keras):
        for variable, values in (("kernel", rng.rand(*shape)), ("bias", rng.rand(shape[-1]))):
            entry = {"path": "lenet/layer{}/{}".format(index, variable), "class": keras_class}
            entry.update(variable=variable, flattened_from=flattened_from)
            layout["weights"].append(entry)
            weights.append(values.astype("float32"))
    cudnn_shapes = [(20, 1, 5, 5), (50, 20, 5, 5), (500, 800), (10, 500)]
    layers = [SimpleNamespace(weight=np.zeros(s), bias=np.zeros(s[0])) for s in cudnn_shapes]
    adapter = native_cudnn_adapter.Adapter("cudnn", {})
    adapter.cupy = np
    adapter.load_initial_weights({"name": "lenet", "layers": layers}, layout, weights)
    assert (layers[0].weight == weights[0].transpose(3, 2, 0, 1)).all()
    assert (layers[1].bias == weights[3]).all()
    # Keras flattens (height, width, channels), cuDNN's NCHW maps (channels, height, width)
    kernel = weights[4].reshape(4, 4, 50, 500).transpose(2, 0, 1, 3).reshape(800, 500)
    assert (layers[2].weight == kernel.T).all()
    untouched = [SimpleNamespace(weight=np.zeros(s), bias=np.zeros(s[0])) for s in cudnn_shapes]
    with pytest.raises(ValueError, match="Keras weights have no place in cuDNN's lenet"):
        adapter.load_initial_weights({"name": "lenet", "layers": untouched[:3]}, layout, weights)
    assert not untouched[0].weight.any()  # nothing copied before every shape was checked
