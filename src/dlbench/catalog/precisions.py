"""The precisions and compilation modes a run may ask for: the values of
those dimensions of the matrix (dlbench.plan.matrix), and each backend's
switch for TensorFloat-32. What each backend does for a precision or a mode
is its definition's (dlbench.catalog.backend_definitions)."""

FLOAT32 = "float32"
# tf32: float32 tensors whose matrix products and convolutions may round
# their inputs to TensorFloat-32 where the hardware has it (dlbench.run.manifest);
# float32 is IEEE float32 on every backend that can be told so.
TF32 = "tf32"
PRECISIONS = (FLOAT32, TF32, "mixed_bfloat16", "mixed_float16")
TF32_MODES = {
    "keras-tensorflow": "tf.config.experimental.enable_tensor_float_32_execution(True)",
    "native-tensorflow": "tf.config.experimental.enable_tensor_float_32_execution(True)",
    "keras-jax": "jax_default_matmul_precision tensorfloat32",
    "native-jax": "jax_default_matmul_precision tensorfloat32",
    "keras-torch": "torch.backends fp32_precision tf32 (cuBLAS, cuDNN, oneDNN)",
    "native-torch": "torch.backends fp32_precision tf32 (cuBLAS, cuDNN, oneDNN)",
    "native-cudnn": "CUDNN_DEFAULT_MATH convolutions, CUBLAS_TF32_TENSOR_OP_MATH products",
}
NO_TF32 = "{} has no switch for TensorFloat-32: its float32 is IEEE"


def mixed(precision):
    """Whether ``precision`` computes in a reduced dtype (tf32 computes in
    float32 tensors)."""
    return precision not in (FLOAT32, TF32)


COMPILE_AUTO = "auto"
COMPILE_MODES = (COMPILE_AUTO, "eager", "compiled")
