"""TensorFlow's own API behind the harness, no Keras: the workloads' tensorflow
modules (dlbench/models/workloads/<model>/in_tensorflow.py), a custom training loop
(tf.GradientTape in a tf.function, XLA-compiled as the backend's
``jit_compile`` says, default on), TensorFlow's fused optimizer kernels, the
same batches in the same order as every other backend. On devices >= 2 a
tf.distribute.MirroredStrategy runs the step on every device and all-reduces
the gradients (the custom-loop recipe of TensorFlow's distributed training
guide). Mixed precision casts the float32 variables to bfloat16 or float16
where the layers use them (``tensorflow_layers.in_precision``); float16 adds
dynamic loss scaling as Keras' LossScaleOptimizer's. TensorFlow is imported
in ``setup``, after the harness pinned the process. Importable on Python 3.6.
"""

import os
import time

from dlbench import catalog
from dlbench.models.layers import LOSS_SCALING, tensorflow_layers
from dlbench.models.programs import in_tensorflow as program
from dlbench.run import launch, manifest
from dlbench.run.backends import frameworks, native


class Adapter(native.NativeAdapter):
    backend = "native-tensorflow"

    def setup(self, threads, seed, devices, parallel=None):
        emulated = self._start(threads, devices, parallel, distributes=True)
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        precision = self.requested.get("precision", catalog.FLOAT32)
        manifest.prepare(precision)
        frameworks.sweep_autograph_bytecode_at_exit()
        import tensorflow as tf

        self.tf = tf
        self.applied.update(
            frameworks.pin_tensorflow(tf, threads, launch.emulated_devices(self.parallel))
        )
        tf.random.set_seed(seed)
        self.jit = self.requested.get("jit_compile", True) is not False  # "auto": XLA
        self.applied["jit_compile"] = self.jit
        self.strategy = tf.distribute.get_strategy()  # the default: one device
        self.applied["device"] = tf.config.list_logical_devices()[0].name
        if devices:
            self.applied["data_parallel"] = self._describe_parallel(devices)
            if not emulated:  # a GPU, never the CPU unseen
                frameworks.tensorflow_devices(tf, self.framework, 1, False, self.backend)
        if launch.distributes(self.parallel):
            found = frameworks.tensorflow_devices(
                tf, self.framework, devices, emulated, self.backend
            )
            self.strategy = tf.distribute.MirroredStrategy(found)
            self.applied["device"] = found
            if emulated and self.jit:
                # As keras-tensorflow: XLA cannot reach the variable copies on
                # the other logical CPUs.
                self.jit = self.applied["jit_compile"] = False
                self.applied["jit_compile_reason"] = (
                    "off: XLA cannot use variables of other emulated CPU devices"
                )
        self.applied["inference_call"] = "tf.function of the forward pass and output, read to numpy"
        manifest.set_tensorflow(tf, precision, self.requested)
        mode = "XLA (jit_compile)" if self.jit else "tf.function graph"
        self.read_manifest = lambda: manifest.tensorflow_manifest(
            tf, bool(devices) and not emulated, mode
        )

    def versions(self):
        import numpy

        info = self.tf.sysconfig.get_build_info()
        return {
            "framework": "tensorflow",
            "framework_version": self.tf.__version__,
            "numpy": numpy.__version__,
            "cuda": info.get("cuda_version"),
            "cudnn": info.get("cudnn_version"),
        }

    def build(self, model_name, data_spec, hyper):
        tf = self.tf
        with self.strategy.scope():  # mirrored variables on devices >= 1
            net = self.registry.builder(model_name, "tensorflow")(tf, data_spec)
        if hasattr(net, "recurrent"):
            self.applied["recurrent_kernels"] = net.recurrent
        precision = self.requested.get("precision", catalog.FLOAT32)
        self.net = net
        if catalog.mixed(precision):
            dtype = getattr(tf, precision.replace("mixed_", ""))
            tensorflow_layers.in_precision(tf, net, dtype)
            scheme = "float32 variables cast to {} where the layers use them".format(dtype.name)
            self._precision_applied(precision, scheme)
        return {"net": net, "hyper": hyper, "predict": program.predict(tf, net, self.jit)}

    @property
    def computed_dtype(self):
        return getattr(getattr(self, "net", None), "computed_dtype", None)

    def _train_step(self, net, settings):
        """The optimizer and one step on every replica: sums of loss and hits
        over the batch; gradients of the mean loss over the global batch
        (all-reduced over the replicas)."""
        tf = self.tf
        total = tf.distribute.ReduceOp.SUM
        variables = net.trainable_variables
        with self.strategy.scope():
            apply = tensorflow_layers.optimizer(tf, variables, settings, native).apply
            scaling = None
            if net.compute_dtype == tf.float16:  # float16 gradients underflow unscaled
                scaling = tensorflow_layers.LossScale(tf)
                self.applied["precision"]["loss_scaling"] = LOSS_SCALING

        def all_reduce(count, gradients):
            context = tf.distribute.get_replica_context()
            count, *gradients = context.all_reduce(total, [count] + gradients)
            return count, gradients

        compiled = program.train_step(
            tf,
            net,
            (lambda gradients: scaling.apply(apply, gradients)) if scaling else apply,
            self.jit,
            all_reduce,
            (lambda: scaling.scale) if scaling else None,
        )

        @tf.function
        def step(x, y):
            return self.strategy.reduce(total, self.strategy.run(compiled, (x, y)), axis=None)

        return step

    @staticmethod
    def load_initial_weights(model, layout, weights):
        tensorflow_layers.load_keras_weights(model["net"], layout, weights)

    @staticmethod
    def parameter_count(model):
        return int(sum(variable.shape.num_elements() for variable in model["net"].variables))

    def train_epoch(self, model, x, y, batch_size):
        tf = self.tf
        if "step" not in model:  # as Keras' first fit: the optimizer and its step
            model["step"] = self._train_step(model["net"], model["hyper"]["optimizer"])
        dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch_size).prefetch(1)
        dataset = self.strategy.experimental_distribute_dataset(dataset)  # splits each batch
        start = time.perf_counter()
        sums = program.train_epoch(
            tf, model["step"], dataset, lambda sums: self._time_first_step(start, sums.numpy)
        )
        loss, hits = sums.numpy()  # waits for the device work
        seconds = time.perf_counter() - start
        return {"loss": float(loss) / len(y), "accuracy": float(hits) / len(y), "seconds": seconds}

    def evaluate(self, model, x, y, batch_size):
        """Keras' categorical cross-entropy on the probabilities (clipped to
        [1e-7, 1 - 1e-7]) and accuracy, off the clock."""
        import numpy

        loss, hits = 0.0, 0
        for rows in native.batches(len(y), batch_size):
            part = {k: v[rows] for k, v in x.items()} if isinstance(x, dict) else x[rows]
            probabilities = model["predict"](part).numpy()
            clipped = numpy.clip(probabilities, 1e-7, 1.0 - 1e-7)
            loss -= float(numpy.sum(y[rows] * numpy.log(clipped)))
            hits += int(numpy.sum(probabilities.argmax(1) == y[rows].argmax(1)))
        return loss / len(y), hits / len(y)

    @staticmethod
    def predict(model, x):
        return model["predict"](x).numpy()

    def training_outputs(self, model, x, draws):
        """The network's outputs in training mode (tf.nn.dropout drawing a
        fresh mask each call), ``draws`` times: the equivalence check's
        dropout draws."""
        import numpy

        tf, net = self.tf, model["net"]
        inputs = tf.nest.map_structure(tf.convert_to_tensor, x)
        return numpy.stack(
            [net.output(net.forward(inputs, training=True)).numpy() for _ in range(draws)]
        )

    def peak_device_memory_mb(self):
        """Peak memory on the first GPU (None on the CPU)."""
        if not self.parallel["devices"] or self.parallel["accelerator"] != "gpu":
            return None
        return frameworks.peak_memory_tensorflow()

    def replica_divergence(self, model):
        if not launch.distributes(self.parallel):
            return None
        return max(
            frameworks.largest_difference([copy.numpy() for copy in variable.values])
            for variable in model["net"].variables
        )
