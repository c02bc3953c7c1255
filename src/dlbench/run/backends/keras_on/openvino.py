"""Keras 3 on OpenVINO (inference): the CPU plugin's precision hint, asked
for every compilation, and its hidden settings (keras_adapter; what a module
here provides: keras_on). Importable on Python 3.6."""

from dlbench.catalog import FLOAT32
from dlbench.run import manifest

# The run's precision is the CPU plugin's hint (pin_precision), not a Keras
# dtype policy.
KERAS_PRECISION = False

# The OpenVINO CPU plugin's INFERENCE_PRECISION_HINT for each precision.
OPENVINO_HINTS = {FLOAT32: "f32", "mixed_bfloat16": "bf16", "mixed_float16": "f16"}


def setup(adapter, threads, seed):
    # OpenVINO's CPU plugin sizes its pool from the process' CPU affinity.
    adapter.applied["inference_engine"] = "OpenVINO CPU plugin (Keras predict graph)"
    pin_precision(adapter)


def pin_precision(adapter):
    """Keras compiles its predict graph with OpenVINO's defaults, and the
    CPU plugin's default precision is bfloat16 wherever the CPU has
    AVX512-BF16 or AMX: a different computation from every other
    backend's float32. Each compilation asks for the run's precision
    here (float32 unless the precision dimension says otherwise), and the
    precision it got is recorded: OpenVINO keeps f32 where the CPU has
    no instructions for the one asked."""
    import openvino

    compile_model = openvino.compile_model

    hint = OPENVINO_HINTS[adapter.precision]

    def float32(model, device_name=None, config=None):
        config = dict(config or {}, INFERENCE_PRECISION_HINT=hint)
        compiled = compile_model(model, device_name, config)
        precision = compiled.get_property("INFERENCE_PRECISION_HINT")
        adapter.applied["inference_precision"] = precision.get_type_name()
        return compiled

    openvino.compile_model = float32
    default = openvino.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")
    adapter.applied["openvino_default_precision"] = default.get_type_name()


def versions(openvino):
    return {}


def read_manifest(adapter, threads):
    """float32 is the CPU plugin's precision hint, asked for every
    compilation (``pin_precision``); its kernels run in the plugin's own
    threads, where no probe of this thread reaches."""
    found = manifest.host_manifest(adapter.framework, threads, "OpenVINO CPU plugin (compiled)")
    ieee = adapter.precision == FLOAT32
    found["float32_matmul"] = found["float32_convolution"] = (
        "ieee" if ieee else manifest.not_applicable(adapter.precision)
    )
    found["openvino_precision_hint"] = "{} asked (the plugin's default: {})".format(
        OPENVINO_HINTS[adapter.precision], adapter.applied.get("openvino_default_precision")
    )
    found["float32_observed"] = manifest.not_applicable("the plugin's hint, read back")
    found["denormals"] = manifest.not_applicable("the plugin's threads, not observed")
    return found
