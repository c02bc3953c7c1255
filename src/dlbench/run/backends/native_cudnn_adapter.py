"""cuDNN and cuBLAS called directly behind the harness (native-cudnn): the
workloads' cudnn modules (dlbench/models/workloads/<model>/in_cudnn.py) issue
the libraries' calls one by one through ctypes, as a C++ program would;
CuPy only holds the device memory. Inference only, on one NVIDIA GPU: the
lowest level of the cuDNN / TensorFlow / Keras latency comparison.
Importable on Python 3.6 and without a GPU (``setup`` on devices 0 loads
the libraries and reports their versions, as the environment check asks).
"""

from dlbench import catalog
from dlbench.models import initial_weights as shared
from dlbench.models.layers import cudnn_layers
from dlbench.models.programs import in_cudnn as program
from dlbench.run import manifest
from dlbench.run.backends import frameworks, native


class Adapter(native.NativeAdapter):
    backend = "native-cudnn"

    def __init__(self, framework, settings):
        native.NativeAdapter.__init__(self, framework, settings)
        self.cupy = None
        self.libraries = None
        self.handles = None
        self.layers = []
        self.seed = 0

    def setup(self, threads, seed, devices, parallel=None):
        self._start(threads, devices, parallel, distributes=True)
        self.seed = seed
        self.libraries = cudnn_layers.Libraries.load()
        self.applied["libraries"] = dict(self.libraries.paths)
        if not devices:  # the environment check: versions, no device
            return
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < devices:
            raise frameworks.no_gpus("cuDNN", devices, [], self.backend)
        self.cupy = cupy
        cupy.cuda.Device(0).use()
        mode = manifest.float32_mode(self.requested.get("precision", catalog.FLOAT32))
        cudnn_layers.in_effect.update(cudnn_layers.MATH[mode])
        self.handles = cudnn_layers.Handles(self.libraries)
        self.applied["device"] = "cuda:0 ({})".format(
            cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        )
        self.applied["convolution_algorithm"] = (
            "cudnnFindConvolutionForwardAlgorithm per input shape, the fastest measured "
            "(as torch.backends.cudnn.benchmark)"
        )
        self.applied["math"] = {
            "convolution": "CUDNN_FMA_MATH (IEEE float32)"
            if mode == "ieee"
            else "CUDNN_DEFAULT_MATH (TF32 allowed)",
            "cublas": "CUBLAS_DEFAULT_MATH (IEEE float32)"
            if mode == "ieee"
            else "CUBLAS_TF32_TENSOR_OP_MATH",
        }
        self.applied["manifest"] = dict(
            manifest.common(threads, 1, "eager: cuDNN and cuBLAS calls"),
            float32_matmul=mode,
            float32_convolution=mode,
            float32_observed=manifest.not_applicable("set through cuDNN's and cuBLAS' math modes"),
            cudnn_autotune=True,
            deterministic=False,
            gpu_memory="CuPy's memory pool, grows on demand",
            denormals=manifest.not_applicable("not observed"),
            compiler_autotune=manifest.not_applicable("no compiler"),
        )

    def versions(self):
        import numpy

        found = {
            "framework": "cudnn",
            "framework_version": _dotted(self.libraries.cudnn_version()),
            "numpy": numpy.__version__,
        }
        if self.handles is not None:
            runtime = self.cupy.cuda.runtime
            found.update(
                cublas=_dotted(self.handles.cublas_version()),
                cuda_runtime=_dotted(runtime.runtimeGetVersion(), cuda=True),
                cuda_driver=_dotted(runtime.driverGetVersion(), cuda=True),
                cupy=self.cupy.__version__,
            )
        return found

    def applied_settings(self):
        found = super(Adapter, self).applied_settings()
        found["inference_call"] = (
            "cudnnConvolutionForward, cudnnAddTensor, cudnnPoolingForward, cublasSgemm, "
            "cudnnActivationForward, cudnnSoftmaxForward (ctypes)"
        )
        chosen = [layer.algorithms() for layer in self.layers if hasattr(layer, "algorithms")]
        if any(chosen):
            found["convolution_algorithms"] = [
                [cudnn_layers.ALGORITHM_NAMES[a] for a in algorithms] for algorithms in chosen
            ]
        return found

    def build(self, model_name, data_spec, hyper):
        if self.handles is None:
            raise RuntimeError("native-cudnn computes on an NVIDIA GPU only (devices >= 1)")
        import numpy

        layers, forward = self.registry.builder(model_name, "cudnn")(self, data_spec)
        self.layers = layers
        rng = numpy.random.RandomState(self.seed)
        for layer in layers:  # Glorot-uniform kernels, zero biases, as Keras
            fan_out, fan_in = layer.weight.shape[0], int(numpy.prod(layer.weight.shape[1:]))
            fan_out *= int(numpy.prod(layer.weight.shape[2:]))
            limit = numpy.sqrt(6.0 / (fan_in + fan_out))
            values = rng.uniform(-limit, limit, layer.weight.shape).astype("float32")
            layer.weight = self.cupy.asarray(values)  # a copy to the device, no kernel
        return {"name": model_name, "layers": layers, "forward": forward}

    def load_initial_weights(self, model, layout, weights):
        """Keras' weights in the channels-first layout (filters, inputs,
        height, width; dense (units, inputs)), each shape checked before
        any copy."""
        targets = [
            tuple(array.shape) for layer in model["layers"] for array in (layer.weight, layer.bias)
        ]
        converted = shared.channels_first(layout, weights)
        values = shared.assign_by_shape(targets, converted, "cuDNN's " + model["name"])
        for index, layer in enumerate(model["layers"]):
            layer.weight = self.cupy.asarray(values[2 * index].astype("float32"))
            layer.bias = self.cupy.asarray(values[2 * index + 1].astype("float32"))

    def parameter_count(self, model):
        return sum(int(layer.weight.size + layer.bias.size) for layer in model["layers"])

    def predict(self, model, x):
        images = native.channels_first(x).astype("float32", copy=False)
        return program.predict(self.cupy, model["forward"], images)

    def synchronize(self):
        if self.cupy is not None:
            self.cupy.cuda.Device(0).synchronize()

    def peak_device_memory_mb(self):
        """What CuPy's pool holds (it keeps every block it allocated: its
        peak); the libraries' own allocations are not in it."""
        if self.cupy is None:
            return None
        return self.cupy.get_default_memory_pool().total_bytes() / 2.0**20

    def close(self):
        if self.handles is not None:
            self.handles.close()
            self.handles = None


def _dotted(version, cuda=False):
    """cuDNN's 91900 as 9.19.0, cuBLAS' 130100 as 13.1.0; CUDA's 13000 as 13.0."""
    if cuda:
        return "{}.{}".format(version // 1000, version % 1000 // 10)
    return "{}.{}.{}".format(version // 10000, version % 10000 // 100, version % 100)
