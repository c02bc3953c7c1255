"""A run's manifest: the hidden settings that change speed or numbers and
that frameworks default differently, set to the backend's best documented
value (or the config's) and read back from the framework after set-up, for
the record (``settings.manifest``). The adapters call one function per
framework; each value is what the framework says, or what a probe computed
(``observed``), or ``n/a (why)`` where the framework has no such setting.
Importable on Python 3.6.

The probes compute something whose result tells the arithmetic apart: 64
products of 1 + 2**-11 summed are 64 + 2**-5 in IEEE float32, and 64 where
inputs are rounded to TensorFloat-32's or bfloat16's mantissa; 1e-38 times
1e-3 is a denormal number, or 0 where the thread flushes denormals.
"""

import os

from dlbench.record import contract

# name: what it is (docs/glossary.md and the report's manifest table say the same)
SETTINGS = {
    "float32_matmul": "float32 matrix products: ieee, or tf32 / bf16 inputs",
    "float32_convolution": "float32 convolutions: ieee, or tf32 / bf16 inputs",
    "float32_observed": "what a float32 matrix product on the run's device computed",
    "cudnn_autotune": "cuDNN tries each convolution's algorithms and keeps the fastest",
    "compiler_autotune": "XLA's or Inductor's autotuning of the kernels it generates",
    "deterministic": "deterministic algorithms only",
    "gpu_memory": "how GPU memory is taken",
    "intra_op_threads": "threads inside one operation",
    "inter_op_threads": "operations run at once",
    "onednn_fpmath_mode": "oneDNN's floating-point math mode on CPUs (strict: IEEE float32)",
    "denormals": "denormal numbers flushed to zero or kept (observed)",
    "compile_mode": "how the framework runs the model's steps",
    "tensor_float_32_execution": "TensorFlow's TF32 switch (it acts on GPUs only)",
    "openvino_precision_hint": "the OpenVINO CPU plugin's INFERENCE_PRECISION_HINT asked",
}
# The settings the tables compare are the record's contract.
COMPARED = contract.COMPARED_SETTINGS
CPU_ONLY = contract.not_applicable("CPU")
ONEDNN_FPMATH = "ONEDNN_DEFAULT_FPMATH_MODE"
TF32 = "tf32"
# What a run in each precision asks of float32 operations: mixed precision's
# float32 operations (losses, reductions, layers kept in float32) stay IEEE.
FLOAT32_MODE = {"tf32": "tf32"}


def float32_mode(precision):
    """``ieee`` or ``tf32``: what the run's float32 operations may do."""
    return FLOAT32_MODE.get(precision, "ieee")


# The adapters' way to say a setting does not apply (the contract's text).
not_applicable = contract.not_applicable


def prepare(precision):
    """Before the framework is imported: oneDNN's math mode for float32
    (strict unless the precision allows tf32; oneDNN's own default is strict,
    and a value the user set is kept and recorded)."""
    os.environ.setdefault(ONEDNN_FPMATH, "TF32" if precision == TF32 else "STRICT")


def onednn_mode():
    """The math mode oneDNN reads; unset, oneDNN's documented default, strict."""
    return os.environ.get(ONEDNN_FPMATH, "STRICT").lower()


def _read(call):
    """A value read back, or why it could not be."""
    try:
        return call()
    except Exception as error:  # a framework release without that setting
        return contract.not_read(error)


def arithmetic(result):
    """ieee where the probe kept float32's low bits, else what it lost."""
    value = float(result)
    if abs(value - (64.0 + 2.0**-5)) < 1e-6:
        return "ieee"
    if abs(value - 64.0) < 1e-6:
        return "reduced (inputs rounded: tf32 or bf16)"
    return "unexpected ({!r})".format(value)


def denormals(result):
    return "flushed" if float(result) == 0.0 else "kept"


def probe_inputs(numpy):
    """(a, b, tiny): 64 x 64 products whose sums tell IEEE float32 from
    reduced inputs, and a float32 whose product with 1e-3 is denormal."""
    a = numpy.full((64, 64), 1.0 + 2.0**-11, dtype="float32")
    b = numpy.ones((64, 64), dtype="float32")
    return a, b, numpy.array([1e-38], dtype="float32")


def common(threads_intra, threads_inter, compile_mode):
    return {
        "intra_op_threads": threads_intra,
        "inter_op_threads": threads_inter,
        "onednn_fpmath_mode": onednn_mode(),
        "compile_mode": compile_mode,
    }


# torch ---------------------------------------------------------------------


def set_torch(torch, precision, settings, on_gpu):
    """float32 arithmetic, cuDNN autotuning and deterministic algorithms as
    the run asks: IEEE float32 unless the precision is tf32 (torch's own
    default runs cuDNN convolutions in TF32), autotuning on where there is a
    GPU (torch's documented advice for fixed shapes; off by default), and
    deterministic algorithms only where the backend's settings ask."""
    mode = float32_mode(precision)
    backends = torch.backends
    if hasattr(backends.cuda.matmul, "fp32_precision"):  # torch >= 2.9
        for leaf in (backends.cuda.matmul, backends.cudnn.conv, backends.cudnn.rnn):
            leaf.fp32_precision = mode
        for leaf in (backends.mkldnn.matmul, backends.mkldnn.conv, backends.mkldnn.rnn):
            leaf.fp32_precision = mode
    else:
        torch.set_float32_matmul_precision("highest" if mode == "ieee" else "high")
        backends.cudnn.allow_tf32 = mode == TF32
    if on_gpu:
        backends.cudnn.benchmark = settings.get("cudnn_autotune", True) is not False
    torch.use_deterministic_algorithms(bool(settings.get("deterministic", False)))


def _torch_precision(torch, on_gpu, what):
    backends = torch.backends
    if not hasattr(backends.cuda.matmul, "fp32_precision"):
        if what == "matmul":
            return {"highest": "ieee"}.get(torch.get_float32_matmul_precision(), TF32)
        return TF32 if backends.cudnn.allow_tf32 and on_gpu else "ieee"
    if on_gpu:
        leaf = backends.cuda.matmul if what == "matmul" else backends.cudnn.conv
    else:
        leaf = getattr(backends.mkldnn, "matmul" if what == "matmul" else "conv")
    value = leaf.fp32_precision
    return "ieee" if value == "none" else value  # none: inherits the default, IEEE


def torch_manifest(torch, on_gpu, compile_mode):
    device = "cuda" if on_gpu else "cpu"
    a, b, tiny = (torch.from_numpy(x).to(device) for x in probe_inputs(_numpy()))
    found = common(torch.get_num_threads(), torch.get_num_interop_threads(), compile_mode)
    found.update(
        float32_matmul=_torch_precision(torch, on_gpu, "matmul"),
        float32_convolution=_torch_precision(torch, on_gpu, "conv"),
        float32_observed=_read(lambda: arithmetic(torch.matmul(a, b)[0, 0].item())),
        denormals=_read(lambda: denormals((tiny * 1e-3).cpu()[0].item())),
        cudnn_autotune=bool(torch.backends.cudnn.benchmark) if on_gpu else CPU_ONLY,
        deterministic=bool(torch.are_deterministic_algorithms_enabled()),
        gpu_memory=(
            "caching allocator, grows on demand ({})".format(
                os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "torch's default")
            )
            if on_gpu
            else CPU_ONLY
        ),
        compiler_autotune=_read(lambda: _inductor_autotune(compile_mode)),
    )
    return found


def _inductor_autotune(compile_mode):
    if "torch.compile" not in compile_mode:
        return not_applicable("eager: no compiler")
    from torch._inductor import config

    return "max_autotune {}".format("on" if config.max_autotune else "off (torch's default)")


# TensorFlow ----------------------------------------------------------------


def set_tensorflow(tf, precision, settings):
    """TF32 off for IEEE float32 (TensorFlow's default is on, from Ampere);
    op determinism where the backend's settings ask."""
    tf.config.experimental.enable_tensor_float_32_execution(float32_mode(precision) == TF32)
    if settings.get("deterministic"):
        tf.config.experimental.enable_op_determinism()


def tensorflow_manifest(tf, on_gpu, compile_mode):
    numpy = _numpy()
    a, b, tiny = probe_inputs(numpy)
    tf32 = tf.config.experimental.tensor_float_32_execution_enabled()
    mode = TF32 if tf32 else "ieee"  # the switch acts on GPUs; the probe shows what ran
    found = common(
        tf.config.threading.get_intra_op_parallelism_threads(),
        tf.config.threading.get_inter_op_parallelism_threads(),
        compile_mode,
    )
    found.update(
        float32_matmul=mode,
        float32_convolution=mode,
        tensor_float_32_execution=bool(tf32),
        float32_observed=_read(lambda: arithmetic(tf.matmul(a, b).numpy()[0, 0])),
        denormals=_read(lambda: denormals((tf.constant(tiny) * 1e-3).numpy()[0])),
        cudnn_autotune=(
            os.environ.get("TF_CUDNN_USE_AUTOTUNE", "1") != "0" if on_gpu else CPU_ONLY
        ),
        deterministic=_read(lambda: _tensorflow_determinism()),
        gpu_memory=_tensorflow_memory(tf) if on_gpu else CPU_ONLY,
        compiler_autotune=_xla_autotune(on_gpu, compile_mode),
    )
    return found


def _tensorflow_determinism():
    # enable_op_determinism's read-back is not exported (TensorFlow 2.8 to 2.20)
    from tensorflow.python.framework import config

    return bool(config.is_op_determinism_enabled())


def _tensorflow_memory(tf):
    gpus = tf.config.list_physical_devices("GPU")
    if gpus and tf.config.experimental.get_memory_growth(gpus[0]):
        return "grows on demand (memory growth on)"
    return "takes most of the GPU at start (TensorFlow's default)"


def _xla_autotune(on_gpu, compile_mode):
    if "XLA" not in compile_mode and "jit" not in compile_mode:
        return not_applicable("no XLA compilation")
    if not on_gpu:
        return not_applicable("XLA autotunes GPU kernels only")
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in flags.split():
        if flag.startswith("--xla_gpu_autotune_level="):
            return "xla_gpu_autotune_level " + flag.split("=", 1)[1]
    return "xla_gpu_autotune_level 4 (XLA's default)"


# JAX -----------------------------------------------------------------------


def prepare_jax(settings):
    """Before jax is imported: XLA's deterministic GPU ops where asked."""
    if settings.get("deterministic"):
        flags = os.environ.get("XLA_FLAGS", "")
        os.environ["XLA_FLAGS"] = (flags + " --xla_gpu_deterministic_ops=true").strip()


def set_jax(jax, precision):
    """JAX's default precision of matrix products and convolutions: float32
    (IEEE) or tensorfloat32 (JAX's own default on GPUs is the fastest the
    hardware has, TF32 from Ampere)."""
    value = "tensorfloat32" if float32_mode(precision) == TF32 else "float32"
    jax.config.update("jax_default_matmul_precision", value)


def jax_manifest(jax, on_gpu, compile_mode):
    numpy = _numpy()
    a, b, tiny = probe_inputs(numpy)
    asked = jax.config.jax_default_matmul_precision
    mode = {"float32": "ieee", "highest": "ieee", "tensorfloat32": TF32}.get(asked, asked)
    flags = os.environ.get("XLA_FLAGS", "")
    # XLA's CPU pool is as large as the process' CPU affinity (the harness
    # pinned it); the Eigen flag makes it one thread.
    threads = 1 if "multi_thread_eigen=false" in flags else len(os.sched_getaffinity(0))
    found = common(threads, 1, compile_mode)
    found.update(
        float32_matmul=mode,
        float32_convolution=mode,
        float32_observed=_read(lambda: arithmetic(jax.numpy.matmul(a, b)[0, 0])),
        denormals=_read(lambda: denormals((jax.numpy.asarray(tiny) * 1e-3)[0])),
        cudnn_autotune=_xla_autotune(on_gpu, "jit") if on_gpu else CPU_ONLY,
        deterministic="--xla_gpu_deterministic_ops=true" in flags,
        gpu_memory=(
            "preallocates {} of the GPU ({})".format(
                os.environ.get("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.75"),
                "XLA_PYTHON_CLIENT_PREALLOCATE="
                + os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true (JAX's default)"),
            )
            if on_gpu
            else CPU_ONLY
        ),
        compiler_autotune=_xla_autotune(on_gpu, compile_mode),
    )
    return found


# The frameworks without a TF32 or autotuning switch ---------------------------


def host_manifest(framework, threads, compile_mode, probe=None, deterministic=None, onednn=True):
    """MXNet, CNTK, Theano, PyTensor, Chainer and OpenVINO on the CPU:
    float32 through their BLAS and oneDNN (IEEE unless oneDNN's math mode
    says otherwise), no cuDNN; ``probe(a, b, tiny)`` computes the product
    and the denormal in the framework (numpy's, on the calling thread,
    where the framework computes there itself)."""
    numpy = _numpy()
    a, b, tiny = probe_inputs(numpy)
    probe = probe or (lambda a, b, tiny: (numpy.matmul(a, b)[0, 0], (tiny * 1e-3)[0]))
    found = common(threads, 1, compile_mode)
    if not onednn:
        found["onednn_fpmath_mode"] = not_applicable("{} does not use oneDNN".format(framework))
    computed = _read(lambda: probe(a, b, tiny))
    matmul, denormal = computed if isinstance(computed, tuple) else (computed, computed)
    found.update(
        float32_matmul="ieee",
        float32_convolution="ieee",
        float32_observed=arithmetic(matmul) if not isinstance(matmul, str) else matmul,
        denormals=denormals(denormal) if not isinstance(denormal, str) else denormal,
        cudnn_autotune=CPU_ONLY,
        deterministic=(
            deterministic
            if deterministic is not None
            else not_applicable("{} has no such switch".format(framework))
        ),
        gpu_memory=CPU_ONLY,
        compiler_autotune=not_applicable("no autotuning compiler"),
    )
    return found


def mxnet_probe(a, b, tiny):
    """The probes in MXNet's own operators."""
    import mxnet

    nd = mxnet.nd
    return nd.dot(nd.array(a), nd.array(b)).asnumpy()[0, 0], (nd.array(tiny) * 1e-3).asnumpy()[0]


def cntk_probe(a, b, tiny):
    """The probes in CNTK's own operators."""
    import cntk

    product = cntk.times(cntk.constant(a), cntk.constant(b)).eval()
    return product[0, 0], (cntk.constant(tiny) * 1e-3).eval()[0]


def _numpy():
    import numpy

    return numpy
