"""cuDNN and cuBLAS called directly (ctypes, their C APIs), the layer
helpers of the native-cudnn family: what a C++ program written against
cudnn.h and cublas_v2.h would call, in the same order, with the same
descriptors. Device memory is CuPy's (its arrays' pointers are passed to the
libraries); CuPy computes nothing here. Importable on Python 3.6 and without
a GPU: the libraries are loaded by ``Libraries.load``.

The enum values are those of cudnn_graph.h / cudnn_ops.h / cudnn_cnn.h
(cuDNN 9) and cublas_api.h.
"""

import ctypes
import glob
import os
import sys

# cudnnTensorFormat_t, cudnnDataType_t, cudnnConvolutionMode_t, ...
NCHW = 0
FLOAT = 0
CROSS_CORRELATION = 1  # what every framework's "convolution" computes
POOLING_MAX = 0
NOT_PROPAGATE_NAN = 0
ACTIVATION_RELU = 1
SOFTMAX_ACCURATE = 1
SOFTMAX_MODE_INSTANCE = 0
DEFAULT_MATH = 0  # cuDNN's default: tensor cores (TF32) allowed for float32
FMA_MATH = 3  # CUDNN_FMA_MATH: FMA kernels only, IEEE float32
CUBLAS_DEFAULT_MATH = 0  # cuBLAS' default: IEEE float32 products
CUBLAS_TF32_TENSOR_OP_MATH = 3
# The math of float32 convolutions and products, per the run's precision
# (dlbench.run.manifest's float32 modes): the adapter sets it before building.
MATH = {
    "ieee": {"convolution": FMA_MATH, "cublas": CUBLAS_DEFAULT_MATH},
    "tf32": {"convolution": DEFAULT_MATH, "cublas": CUBLAS_TF32_TENSOR_OP_MATH},
}
in_effect = dict(MATH["ieee"])
CUBLAS_OP_N = 0
CUBLAS_OP_T = 1
ALGORITHMS = 8  # CUDNN_CONVOLUTION_FWD_ALGO_COUNT
ALGORITHM_NAMES = (  # cudnnConvolutionFwdAlgo_t
    "IMPLICIT_GEMM",
    "IMPLICIT_PRECOMP_GEMM",
    "GEMM",
    "DIRECT",
    "FFT",
    "FFT_TILING",
    "WINOGRAD",
    "WINOGRAD_NONFUSED",
)

# Where pip's NVIDIA wheels put the libraries (nvidia/<library>/lib for CUDA
# 12, nvidia/cu13/lib for CUDA 13), then the CUDA toolkit's own.
WHEEL_FOLDERS = ("nvidia/cudnn/lib", "nvidia/cublas/lib", "nvidia/cu13/lib", "nvidia/cu12/lib")
TOOLKIT_FOLDERS = ("/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu")
# cuDNN 9 is split into libraries that libcudnn loads on demand: loaded
# first, globally, they are found whatever the loader's search path says.
CUDNN_PARTS = (
    "libcudnn_graph",
    "libcudnn_engines_precompiled",
    "libcudnn_engines_runtime_compiled",
    "libcudnn_heuristic",
    "libcudnn_ops",
    "libcudnn_cnn",
    "libcudnn_adv",
)


class ConvolutionPerformance(ctypes.Structure):
    """cudnnConvolutionFwdAlgoPerf_t."""

    _fields_ = [
        ("algo", ctypes.c_int),
        ("status", ctypes.c_int),
        ("time", ctypes.c_float),
        ("memory", ctypes.c_size_t),
        ("determinism", ctypes.c_int),
        ("mathType", ctypes.c_int),
        ("reserved", ctypes.c_int * 3),
    ]


def library_folders(paths=None):
    """The folders searched for the libraries, in order."""
    found = []
    for entry in paths if paths is not None else sys.path:
        for folder in WHEEL_FOLDERS:
            candidate = os.path.join(entry, folder)
            if os.path.isdir(candidate) and candidate not in found:
                found.append(candidate)
    return found + [folder for folder in TOOLKIT_FOLDERS if os.path.isdir(folder)]


def find_library(name, folders):
    """The path of ``name`` (``libcudnn``) with a version suffix
    (``libcudnn.so.9``) in the first folder that has it, or None."""
    for folder in folders:
        versioned = sorted(glob.glob(os.path.join(folder, name + ".so.[0-9]*")), key=len)
        if versioned:
            return versioned[0]
    return None


def _declare(library, signatures):
    for name, argtypes in signatures.items():
        function = getattr(library, name)
        function.argtypes = argtypes
        function.restype = ctypes.c_int


P, INT, S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
CUDNN_SIGNATURES = {
    "cudnnCreate": [ctypes.POINTER(P)],
    "cudnnDestroy": [P],
    "cudnnCreateTensorDescriptor": [ctypes.POINTER(P)],
    "cudnnSetTensor4dDescriptor": [P, INT, INT, INT, INT, INT, INT],
    "cudnnCreateFilterDescriptor": [ctypes.POINTER(P)],
    "cudnnSetFilter4dDescriptor": [P, INT, INT, INT, INT, INT, INT],
    "cudnnCreateConvolutionDescriptor": [ctypes.POINTER(P)],
    "cudnnSetConvolution2dDescriptor": [P, INT, INT, INT, INT, INT, INT, INT, INT],
    "cudnnSetConvolutionMathType": [P, INT],
    "cudnnGetConvolution2dForwardOutputDim": [P, P, P] + [ctypes.POINTER(INT)] * 4,
    "cudnnFindConvolutionForwardAlgorithm": [
        P,
        P,
        P,
        P,
        P,
        INT,
        ctypes.POINTER(INT),
        ctypes.POINTER(ConvolutionPerformance),
    ],
    "cudnnConvolutionForward": [P, P, P, P, P, P, P, INT, P, S, P, P, P],
    "cudnnAddTensor": [P, P, P, P, P, P, P],
    "cudnnCreatePoolingDescriptor": [ctypes.POINTER(P)],
    "cudnnSetPooling2dDescriptor": [P, INT, INT, INT, INT, INT, INT, INT, INT],
    "cudnnPoolingForward": [P, P, P, P, P, P, P, P],
    "cudnnCreateActivationDescriptor": [ctypes.POINTER(P)],
    "cudnnSetActivationDescriptor": [P, INT, INT, ctypes.c_double],
    "cudnnActivationForward": [P, P, P, P, P, P, P],
    "cudnnSoftmaxForward": [P, INT, INT, P, P, P, P, P, P],
}
CUBLAS_SIGNATURES = {
    "cublasCreate_v2": [ctypes.POINTER(P)],
    "cublasDestroy_v2": [P],
    "cublasSgemm_v2": [P, INT, INT, INT, INT, INT, P, P, INT, P, INT, P, P, INT],
    "cublasGetVersion_v2": [P, ctypes.POINTER(INT)],
    "cublasSetMathMode": [P, INT],
}


class Libraries(object):
    """libcudnn and libcublas, loaded, their functions declared; every call
    through ``cudnn`` and ``cublas`` checks the status it returns."""

    def __init__(self, cudnn, cublas, paths):
        self._cudnn = cudnn
        self._cublas = cublas
        self.paths = paths

    @classmethod
    def load(cls, folders=None):
        folders = library_folders() if folders is None else folders
        paths = {name: find_library(name, folders) for name in ("libcudnn", "libcublas")}
        missing = [name for name, path in sorted(paths.items()) if path is None]
        if missing:
            raise OSError(
                "{} not found in {} (pip's nvidia-cudnn and nvidia-cublas wheels, or the "
                "CUDA toolkit)".format(" and ".join(missing), folders or "no folder")
            )
        folder = os.path.dirname(paths["libcudnn"])
        for part in CUDNN_PARTS:
            part_path = find_library(part, [folder])
            if part_path:
                ctypes.CDLL(part_path, mode=ctypes.RTLD_GLOBAL)
        cudnn = ctypes.CDLL(paths["libcudnn"], mode=ctypes.RTLD_GLOBAL)
        cublas = ctypes.CDLL(paths["libcublas"], mode=ctypes.RTLD_GLOBAL)
        _declare(cudnn, CUDNN_SIGNATURES)
        cudnn.cudnnGetVersion.restype = ctypes.c_size_t
        cudnn.cudnnGetVersion.argtypes = []
        cudnn.cudnnGetErrorString.restype = ctypes.c_char_p
        cudnn.cudnnGetErrorString.argtypes = [ctypes.c_int]
        _declare(cublas, CUBLAS_SIGNATURES)
        return cls(cudnn, cublas, paths)

    def cudnn(self, name, *args):
        status = getattr(self._cudnn, name)(*args)
        if status != 0:
            message = self._cudnn.cudnnGetErrorString(status).decode()
            raise RuntimeError("{}: {} ({})".format(name, message, status))

    def cublas(self, name, *args):
        status = getattr(self._cublas, name)(*args)
        if status != 0:
            raise RuntimeError("{}: cuBLAS status {}".format(name, status))

    def cudnn_version(self):
        return int(self._cudnn.cudnnGetVersion())


class Handles(object):
    """A cuDNN and a cuBLAS handle on the current device and stream."""

    def __init__(self, libraries):
        self.libraries = libraries
        self.cudnn = P()
        self.cublas = P()
        libraries.cudnn("cudnnCreate", ctypes.byref(self.cudnn))
        libraries.cublas("cublasCreate_v2", ctypes.byref(self.cublas))
        libraries.cublas("cublasSetMathMode", self.cublas, in_effect["cublas"])

    def cublas_version(self):
        version = INT()
        self.libraries.cublas("cublasGetVersion_v2", self.cublas, ctypes.byref(version))
        return version.value

    def close(self):
        self.libraries.cudnn("cudnnDestroy", self.cudnn)
        self.libraries.cublas("cublasDestroy_v2", self.cublas)


def pointer(array):
    """The device address of a CuPy array."""
    return P(array.data.ptr)


def scalar(value):
    return ctypes.byref(ctypes.c_float(value))


def tensor(libraries, n, c, h, w):
    """A float32 NCHW tensor descriptor."""
    descriptor = P()
    libraries.cudnn("cudnnCreateTensorDescriptor", ctypes.byref(descriptor))
    libraries.cudnn("cudnnSetTensor4dDescriptor", descriptor, NCHW, FLOAT, n, c, h, w)
    return descriptor


class Convolution(object):
    """A 5x5-style valid convolution (stride 1, no padding) with its bias:
    cudnnConvolutionForward with the algorithm cudnnFind... measured fastest
    for the batch (as torch.backends.cudnn.benchmark), then cudnnAddTensor."""

    def __init__(self, libraries, cupy, inputs, filters, size):
        self.libraries = libraries
        self.cupy = cupy
        self.shape = (filters, inputs, size, size)
        self.weight = cupy.zeros(self.shape, dtype="float32")
        self.bias = cupy.zeros((filters,), dtype="float32")
        self.filter = P()
        libraries.cudnn("cudnnCreateFilterDescriptor", ctypes.byref(self.filter))
        libraries.cudnn("cudnnSetFilter4dDescriptor", self.filter, FLOAT, NCHW, *self.shape)
        self.convolution = P()
        libraries.cudnn("cudnnCreateConvolutionDescriptor", ctypes.byref(self.convolution))
        libraries.cudnn(
            "cudnnSetConvolution2dDescriptor",
            self.convolution,
            0,
            0,
            1,
            1,
            1,
            1,
            CROSS_CORRELATION,
            FLOAT,
        )
        libraries.cudnn("cudnnSetConvolutionMathType", self.convolution, in_effect["convolution"])
        self.bias_descriptor = tensor(libraries, 1, filters, 1, 1)
        self.plans = {}  # per input shape: descriptors, algorithm, workspace

    def output_shape(self, x_descriptor):
        dims = [INT() for _ in range(4)]
        self.libraries.cudnn(
            "cudnnGetConvolution2dForwardOutputDim",
            self.convolution,
            x_descriptor,
            self.filter,
            *[ctypes.byref(d) for d in dims],
        )
        return tuple(d.value for d in dims)

    def plan(self, handle, shape):
        if shape not in self.plans:
            x_descriptor = tensor(self.libraries, *shape)
            out = self.output_shape(x_descriptor)
            y_descriptor = tensor(self.libraries, *out)
            found = INT()
            results = (ConvolutionPerformance * ALGORITHMS)()
            self.libraries.cudnn(
                "cudnnFindConvolutionForwardAlgorithm",
                handle,
                x_descriptor,
                self.filter,
                self.convolution,
                y_descriptor,
                ALGORITHMS,
                ctypes.byref(found),
                results,
            )
            best = next(r for r in results[: found.value] if r.status == 0)
            workspace = self.cupy.empty((max(best.memory, 1),), dtype="uint8")
            self.plans[shape] = (x_descriptor, y_descriptor, out, best.algo, workspace)
        return self.plans[shape]

    def __call__(self, handle, x):
        x_descriptor, y_descriptor, out, algorithm, workspace = self.plan(handle, x.shape)
        y = self.cupy.empty(out, dtype="float32")
        self.libraries.cudnn(
            "cudnnConvolutionForward",
            handle,
            scalar(1.0),
            x_descriptor,
            pointer(x),
            self.filter,
            pointer(self.weight),
            self.convolution,
            algorithm,
            pointer(workspace),
            workspace.nbytes,
            scalar(0.0),
            y_descriptor,
            pointer(y),
        )
        self.libraries.cudnn(
            "cudnnAddTensor",
            handle,
            scalar(1.0),
            self.bias_descriptor,
            pointer(self.bias),
            scalar(1.0),
            y_descriptor,
            pointer(y),
        )
        return y

    def algorithms(self):
        return sorted({plan[3] for plan in self.plans.values()})


class MaxPool(object):
    """2x2 max pooling, stride 2 (cudnnPoolingForward)."""

    def __init__(self, libraries, cupy, size=2):
        self.libraries = libraries
        self.cupy = cupy
        self.size = size
        self.pooling = P()
        libraries.cudnn("cudnnCreatePoolingDescriptor", ctypes.byref(self.pooling))
        libraries.cudnn(
            "cudnnSetPooling2dDescriptor",
            self.pooling,
            POOLING_MAX,
            NOT_PROPAGATE_NAN,
            size,
            size,
            0,
            0,
            size,
            size,
        )
        self.descriptors = {}

    def __call__(self, handle, x):
        n, c, h, w = x.shape
        out = (n, c, h // self.size, w // self.size)
        if x.shape not in self.descriptors:
            shapes = (x.shape, out)
            self.descriptors[x.shape] = tuple(tensor(self.libraries, *s) for s in shapes)
        x_descriptor, y_descriptor = self.descriptors[x.shape]
        y = self.cupy.empty(out, dtype="float32")
        self.libraries.cudnn(
            "cudnnPoolingForward",
            handle,
            self.pooling,
            scalar(1.0),
            x_descriptor,
            pointer(x),
            scalar(0.0),
            y_descriptor,
            pointer(y),
        )
        return y


class Dense(object):
    """y = x W^T + b: cublasSgemm on row-major (batch, inputs) activations
    and a (units, inputs) weight, then the bias with cudnnAddTensor and,
    where asked, ReLU with cudnnActivationForward (in place)."""

    def __init__(self, libraries, cupy, inputs, units, relu=False):
        self.libraries = libraries
        self.cupy = cupy
        self.inputs, self.units = inputs, units
        self.weight = cupy.zeros((units, inputs), dtype="float32")
        self.bias = cupy.zeros((units,), dtype="float32")
        self.bias_descriptor = tensor(libraries, 1, units, 1, 1)
        self.activation = None
        if relu:
            self.activation = P()
            libraries.cudnn("cudnnCreateActivationDescriptor", ctypes.byref(self.activation))
            libraries.cudnn(
                "cudnnSetActivationDescriptor",
                self.activation,
                ACTIVATION_RELU,
                NOT_PROPAGATE_NAN,
                0.0,
            )
        self.descriptors = {}

    def __call__(self, handles, x):
        n = x.shape[0]
        y = self.cupy.empty((n, self.units, 1, 1), dtype="float32")
        # Column-major cuBLAS sees the row-major y (n, units) as y^T = W x^T.
        self.libraries.cublas(
            "cublasSgemm_v2",
            handles.cublas,
            CUBLAS_OP_T,
            CUBLAS_OP_N,
            self.units,
            n,
            self.inputs,
            scalar(1.0),
            pointer(self.weight),
            self.inputs,
            pointer(x),
            self.inputs,
            scalar(0.0),
            pointer(y),
            self.units,
        )
        if n not in self.descriptors:
            self.descriptors[n] = tensor(self.libraries, n, self.units, 1, 1)
        descriptor = self.descriptors[n]
        self.libraries.cudnn(
            "cudnnAddTensor",
            handles.cudnn,
            scalar(1.0),
            self.bias_descriptor,
            pointer(self.bias),
            scalar(1.0),
            descriptor,
            pointer(y),
        )
        if self.activation is not None:
            self.libraries.cudnn(
                "cudnnActivationForward",
                handles.cudnn,
                self.activation,
                scalar(1.0),
                descriptor,
                pointer(y),
                scalar(0.0),
                descriptor,
                pointer(y),
            )
        return y


class Softmax(object):
    """cudnnSoftmaxForward over each sample's (classes, 1, 1)."""

    def __init__(self, libraries, cupy):
        self.libraries = libraries
        self.cupy = cupy
        self.descriptors = {}

    def __call__(self, handle, x):
        if x.shape not in self.descriptors:
            self.descriptors[x.shape] = tensor(self.libraries, *x.shape)
        descriptor = self.descriptors[x.shape]
        y = self.cupy.empty(x.shape, dtype="float32")
        self.libraries.cudnn(
            "cudnnSoftmaxForward",
            handle,
            SOFTMAX_ACCURATE,
            SOFTMAX_MODE_INSTANCE,
            scalar(1.0),
            descriptor,
            pointer(x),
            scalar(0.0),
            descriptor,
            pointer(y),
        )
        return y
