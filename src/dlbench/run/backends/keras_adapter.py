"""One adapter for every Keras backend: Keras 3 on TensorFlow, JAX or torch.

The framework is imported in ``setup``, after the harness pinned the process
to its CPUs, because several frameworks size their thread pools on import.
On devices >= 2 the model is trained data-parallel, the way each backend's
documentation does it: Keras' DataParallel distribution on JAX, a
MirroredStrategy on TensorFlow, DistributedDataParallel in one process per
device on torch (started by torchrun, see dlbench.run.launch).
Importable on Python 3.6.
"""

import os
import time

from dlbench import catalog
from dlbench.catalog import FLOAT32
from dlbench.models import initial_weights
from dlbench.models.layers import dropout_on, keras_layers
from dlbench.models.programs import in_keras as program
from dlbench.run import compiles, launch, manifest
from dlbench.run.backends import base, frameworks, keras_kernels, keras_parallel

# Found by the equivalence check (babi_rnn, imdb_gru, imdb_transformer on
# keras-tensorflow departed at steps 1-2): in Keras 3 (3.15.1) on TensorFlow
# an Embedding's gradient is a tf.IndexedSlices with one row per occurrence
# of a word in the batch, and the optimizers' elementwise ops square each row
# apart, so a word seen twice adds g1^2 + g2^2 to its second moment where
# JAX and torch add (g1 + g2)^2 (two Adam steps on a word seen twice: 0.044
# against 0.092). The first moment is linear and agrees; SGD is unaffected.
SPARSE_SQUARES = (
    "Keras 3 on TensorFlow: an Embedding's sparse gradient is squared per occurrence of a "
    "word in the batch, not per word, in the optimizer's second moment"
)
SQUARES_THE_GRADIENT = ("adam", "rmsprop", "adadelta")


def without_dropout(layers):
    """Keras 3's Dropout layers at rate 0, which pass their inputs through:
    for the equivalence check (dlbench.models.layers.set_dropout). Keras 3 reads
    the rate when a step is traced, after the model is built."""
    for layer in layers:
        if "Dropout" in type(layer).__name__ and hasattr(layer, "rate"):
            layer.rate = 0.0


# The OpenVINO CPU plugin's INFERENCE_PRECISION_HINT for each precision.
OPENVINO_HINTS = {FLOAT32: "f32", "mixed_bfloat16": "bf16", "mixed_float16": "f16"}


class Adapter(keras_parallel.KerasDataParallel, keras_kernels.RecurrentKernelProbes, base.Adapter):
    devices_not_supported = "devices={}: {} has no data-parallel training here"

    def __init__(self, framework, settings):
        super(Adapter, self).__init__(framework, settings)
        self.keras = None
        self.jit_compile = None
        self.recurrent_kernels = {}
        self.emulated = False
        self.distribution = None  # JAX: keras.distribution.DataParallel
        self.strategy = None  # TensorFlow: tf.distribute.MirroredStrategy
        self.process_group = False  # torch: DistributedDataParallel processes
        self.step_sync = False
        self.forced_jit = None
        self.precision = self.requested.get("precision", FLOAT32)

    def setup(self, threads, seed, devices, parallel=None):
        self.parallel = dict(launch.ON_THE_CPU, **(parallel or {}))
        if devices and self.framework not in self.distributors():
            raise NotImplementedError(self.devices_not_supported.format(devices, self.framework))
        self.emulated = bool(devices) and self.parallel["accelerator"] == "emulated-cpu"
        os.environ["KERAS_BACKEND"] = self.framework
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        manifest.prepare(self.precision)
        self.setups()[self.framework](threads, seed)
        import keras

        self.keras = keras
        if catalog.mixed(self.precision) and self.framework != "openvino":
            keras.config.set_dtype_policy(self.precision)
        if launch.distributes(self.parallel):
            self.distributors()[self.framework](devices)
        elif devices:
            self._one_device()
        if devices:
            self.applied["data_parallel"] = self._describe_parallel(devices)
        self._seed_and_probe(seed, devices)
        self.applied.update(
            {
                "keras_backend": keras.backend.backend(),
                "threads": threads,
                "dtype": keras.backend.floatx(),
                "image_data_format": keras.backend.image_data_format(),
            }
        )
        self._set_hidden_settings()
        self.read_manifest = lambda: self._manifest(threads)

    # Each framework's own code, by its name (subclasses add theirs).
    def setups(self):
        """{framework: its setup(threads, seed)}, before Keras is imported."""
        return {
            "tensorflow": self._setup_tensorflow,
            "jax": self._setup_jax,
            "torch": self._setup_torch,
            "openvino": self._setup_openvino,
        }

    def distributors(self):
        """{framework: its distribute(devices)} where data-parallel training
        exists (keras_parallel)."""
        return {
            "tensorflow": self._distribute_tensorflow,
            "jax": self._distribute_jax,
            "torch": self._distribute_torch,
        }

    def version_readers(self):
        """{framework: versions(module)}, the extras a framework reports."""
        return {
            "tensorflow": self._versions_tensorflow,
            "jax": self._versions_jax,
            "torch": self._versions_torch,
        }

    @property
    def on_gpu(self):
        return bool(self.parallel["devices"]) and not self.emulated

    def _compile_mode(self):
        """What runs the steps, as far as known before ``build`` resolves
        Keras' "auto" (``settings`` says what ran)."""
        jit = self.jit_compile
        if jit is None:
            jit = self.requested.get("jit_compile", "auto")
        names = {"tensorflow": "XLA", "jax": "jax.jit (XLA)", "torch": "torch.compile"}
        if self.framework not in names:
            return "{} (compiles every model)".format(self.framework)
        if jit is True or self.framework == "jax":
            return "{} (Keras jit_compile)".format(names[self.framework])
        if jit is False:
            return "eager" + (" (tf.function graph)" if self.framework == "tensorflow" else "")
        return "Keras' jit_compile=auto"

    def _set_hidden_settings(self):
        """The hidden settings (dlbench.run.manifest) of the framework
        underneath Keras, set as the run asks."""
        if self.framework == "tensorflow":
            import tensorflow as tf

            manifest.set_tensorflow(tf, self.precision, self.requested)
        elif self.framework == "jax":
            import jax

            manifest.set_jax(jax, self.precision)
        elif self.framework == "torch":
            import torch

            manifest.set_torch(torch, self.precision, self.requested, self.on_gpu)

    def _manifest(self, threads):
        """The hidden settings, read back from the framework underneath Keras."""
        if self.framework == "tensorflow":
            import tensorflow as tf

            return manifest.tensorflow_manifest(tf, self.on_gpu, self._compile_mode())
        if self.framework == "jax":
            import jax

            return manifest.jax_manifest(jax, self.on_gpu, self._compile_mode())
        if self.framework == "torch":
            import torch

            return manifest.torch_manifest(torch, self.on_gpu, self._compile_mode())
        return self._host_manifest(threads)

    def _host_manifest(self, threads):
        """OpenVINO: float32 is the CPU plugin's precision hint, asked for
        every compilation (``_pin_openvino_precision``); its kernels run in
        the plugin's own threads, where no probe of this thread reaches."""
        found = manifest.host_manifest(self.framework, threads, "OpenVINO CPU plugin (compiled)")
        ieee = self.precision == FLOAT32
        found["float32_matmul"] = found["float32_convolution"] = (
            "ieee" if ieee else manifest.not_applicable(self.precision)
        )
        found["openvino_precision_hint"] = "{} asked (the plugin's default: {})".format(
            OPENVINO_HINTS[self.precision], self.applied.get("openvino_default_precision")
        )
        found["float32_observed"] = manifest.not_applicable("the plugin's hint, read back")
        found["denormals"] = manifest.not_applicable("the plugin's threads, not observed")
        return found

    def _seed_and_probe(self, seed, devices):
        self._probe_recurrent_kernels(devices)
        self.keras.utils.set_random_seed(seed)

    def _setup_tensorflow(self, threads, seed):
        frameworks.sweep_autograph_bytecode_at_exit()
        import tensorflow as tf

        emulated = launch.emulated_devices(self.parallel)
        self.applied.update(frameworks.pin_tensorflow(tf, threads, emulated))

    def _setup_jax(self, threads, seed):
        manifest.prepare_jax(self.requested)
        emulated = launch.emulated_devices(self.parallel)
        self.applied.update(frameworks.pin_jax(threads, emulated))
        self.applied.update(
            frameworks.jax_compilation_cache(self.requested.get("compilation_cache", False))
        )
        self.compile_counter = compiles.jax_counter()

    def _setup_torch(self, threads, seed):
        self.applied.update(frameworks.torch_compile_cache())
        import torch

        self.applied.update(frameworks.pin_torch(torch, threads))

    def _setup_openvino(self, threads, seed):
        # OpenVINO's CPU plugin sizes its pool from the process' CPU affinity.
        self.applied["inference_engine"] = "OpenVINO CPU plugin (Keras predict graph)"
        self._pin_openvino_precision()

    def _pin_openvino_precision(self):
        """Keras compiles its predict graph with OpenVINO's defaults, and the
        CPU plugin's default precision is bfloat16 wherever the CPU has
        AVX512-BF16 or AMX: a different computation from every other
        backend's float32. Each compilation asks for the run's precision
        here (float32 unless the precision dimension says otherwise), and the
        precision it got is recorded: OpenVINO keeps f32 where the CPU has
        no instructions for the one asked."""
        import openvino

        compile_model = openvino.compile_model

        hint = OPENVINO_HINTS[self.precision]

        def float32(model, device_name=None, config=None):
            config = dict(config or {}, INFERENCE_PRECISION_HINT=hint)
            compiled = compile_model(model, device_name, config)
            precision = compiled.get_property("INFERENCE_PRECISION_HINT")
            self.applied["inference_precision"] = precision.get_type_name()
            return compiled

        openvino.compile_model = float32
        default = openvino.Core().get_property("CPU", "INFERENCE_PRECISION_HINT")
        self.applied["openvino_default_precision"] = default.get_type_name()

    def versions(self):
        import numpy

        keras = self.keras
        module = __import__(self.framework)
        found = {
            "keras": keras.__version__,
            "keras_backend": keras.backend.backend(),
            "framework": self.framework,
            "framework_version": module.__version__,
            "numpy": numpy.__version__,
        }
        # Framework-specific extras (CUDA, cuDNN, ...) where there are any.
        found.update(self.version_readers().get(self.framework, lambda module: {})(module))
        return found

    @staticmethod
    def _versions_tensorflow(tf):
        info = tf.sysconfig.get_build_info()
        return {"cuda": info.get("cuda_version"), "cudnn": info.get("cudnn_version")}

    @staticmethod
    def _versions_jax(jax):
        import jaxlib

        return {"jaxlib": jaxlib.__version__, "jax_platform": jax.default_backend()}

    @staticmethod
    def _versions_torch(torch):
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        return {"cuda": torch.version.cuda, "cudnn": cudnn}

    def applied_settings(self):
        found = base.Adapter.applied_settings(self)  # read after build: the compile mode that ran
        found["jit_compile"] = self.jit_compile
        if self.forced_jit:
            found["jit_compile_reason"] = self.forced_jit
        found["inference_call"] = "predict_on_batch"
        if self.recurrent_kernels:
            found["recurrent_kernels"] = dict(self.recurrent_kernels)
        return found

    def build(self, model_name, data_spec, hyper):
        keras = self.keras
        settings = {"jit_compile": self.requested.get("jit_compile", "auto")}
        if self.forced_jit:
            settings["jit_compile"] = False
        with self._scope():
            model = self.registry.builder(model_name, "keras")(keras, data_spec)
            if not dropout_on():
                without_dropout(model._flatten_layers(include_self=False))
            if "optimizer" in hyper:
                made = keras_layers.optimizer(keras, hyper["optimizer"])
                program.compile_model(model, made, hyper["loss"], **settings)
                rules = self._own_rules(model, hyper["optimizer"]["name"])
                if rules:
                    self.applied["own_rules"] = rules
            else:  # inference compiles only the jit choice
                model.compile(**settings)
        # What Keras resolved "auto" (or a request it could not honour) to.
        self.jit_compile = bool(model.jit_compile)
        if self.jit_compile and self.framework == "torch":
            self.applied["torch_compile_shapes"] = frameworks.torch_compile_shapes()
            self.applied.update(frameworks.torch_precompiled_headers())
        if self.framework != "openvino" and hasattr(model, "dtype_policy"):  # Keras 3
            self.applied["precision"] = precision_that_ran(model, self.precision)
        if self.process_group:
            keras_parallel.distributed_train_step(model, self.parallel)
        return model

    def _own_rules(self, model, optimizer_name):
        """Where this backend computes other than Keras 3 on JAX and torch."""
        if self.framework != "tensorflow" or optimizer_name not in SQUARES_THE_GRADIENT:
            return []
        layers = model._flatten_layers(include_self=False)
        return [SPARSE_SQUARES] if any(type(x).__name__ == "Embedding" for x in layers) else []

    @staticmethod
    def parameter_count(model):
        return int(model.count_params())

    @staticmethod
    def load_initial_weights(model, manifest, weights):
        """The shared initial weights (dlbench.models.initial_weights): Keras'
        own layout and order, Keras 2's too."""
        initial_weights.check_shapes([w.shape for w in model.get_weights()], manifest)
        model.set_weights(weights)

    def train_epoch(self, model, x, y, batch_size):
        timer = epoch_timer(self.keras)
        callbacks = [timer] + ([step_waiter(self.keras)] if self.step_sync else [])
        if self.first_step_seconds is None:  # the run's first epoch
            callbacks.append(first_step_timer(self.keras, self))
        if self.process_group:
            import torch.distributed as dist

            dist.barrier()  # every process starts its epoch together
        with self._scope():
            history = program.train_epoch(model, x, y, batch_size, callbacks)
        loss, accuracy = history["loss"][-1], history["accuracy"][-1]
        if self.process_group:  # each process saw its share: the mean is the epoch's
            loss, accuracy = frameworks.mean_over_processes([loss, accuracy])
        return {"seconds": timer.seconds, "loss": float(loss), "accuracy": float(accuracy)}

    def replica_divergence(self, model):
        """The largest absolute difference between any weight on two
        replicas after training: 0 when data parallelism kept them equal;
        None with one replica."""
        if self.process_group:
            return frameworks.divergence_over_processes(model.parameters())
        if self.distribution is None and self.strategy is None:
            return None
        largest = 0.0
        for variable in model.variables:
            value = variable.value
            if self.distribution is not None:
                copies = [shard.data for shard in value.addressable_shards]
            else:
                copies = list(value.values)
            largest = max(largest, frameworks.largest_difference(copies))
        return largest

    @staticmethod
    def evaluate(model, x, y, batch_size):
        scores = model.evaluate(x, y, batch_size=batch_size, verbose=0, return_dict=True)
        return float(scores["loss"]), float(scores["accuracy"])

    def recurrent_ops(self, model, x):
        """Keras on torch: which recurrent operators its GRU/LSTM ran."""
        if self.framework != "torch":
            return None
        import torch

        return frameworks.torch_recurrent_ops(torch, lambda: self.predict(model, x))

    @staticmethod
    def predict(model, x):
        return program.predict(model, x)

    def training_outputs(self, model, x, draws):
        """The model's outputs in training mode, ``draws`` times, each with
        fresh dropout masks (Keras 3's layers advance their seed generator
        at every eager call): the equivalence check's dropout draws."""
        import numpy

        ops = self.keras.ops
        with self._scope():
            return numpy.stack(
                [ops.convert_to_numpy(model(x, training=True)) for _ in range(draws)]
            )

    def prepare_check(self, model, hyper):
        """For the equivalence check: where Keras 3 on TensorFlow hands the
        optimizer an Embedding's gradient as tf.IndexedSlices (one row per
        occurrence, SPARSE_SQUARES), the optimizer gets it dense (rows of a
        word summed, tf.convert_to_tensor), as JAX and torch compute it.
        What it changed, for the check's record."""
        if SPARSE_SQUARES not in self.applied.get("own_rules", []):
            return {}
        import tensorflow as tf

        optimizer = model.optimizer
        apply = optimizer.apply

        def dense_apply(grads, trainable_variables=None):
            grads = [
                tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads
            ]
            return apply(grads, trainable_variables)

        optimizer.apply = dense_apply  # before the train step is traced
        return {"dense_gradients": "Embedding gradients densified before the optimizer"}

    def synchronize(self):
        pass  # fit() and evaluate() return host values: device work is done

    def close(self):
        if self.process_group:
            frameworks.leave_process_group()

    def peak_device_memory_mb(self):
        """Peak memory on the first GPU (None on the CPU)."""
        if not self.parallel["devices"] or self.emulated:
            return None
        return frameworks.PEAK_MEMORY.get(self.framework, lambda: None)()


def precision_that_ran(model, asked):
    """What the built model computes in: its dtype policy, and the compute
    and variable dtypes of its first layer with weights (a layer may keep
    its own policy); under loss scaling, the optimizer that scales."""
    layer = next(x for x in model._flatten_layers(include_self=False) if x.weights)
    found = {
        "asked": asked,
        "policy": model.dtype_policy.name,
        "compute_dtype": str(layer.compute_dtype),
        "variable_dtype": str(layer.weights[0].dtype),
        "layer": layer.name,
    }
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and type(optimizer).__name__ == "LossScaleOptimizer":
        found["loss_scaling"] = "keras.optimizers.LossScaleOptimizer (dynamic)"
    return found


def step_waiter(keras):
    """Reads every step's logs, which waits for the step to finish."""

    class StepWaiter(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            [float(value) for value in (logs or {}).values()]

    return StepWaiter()


def first_step_timer(keras, adapter):
    """Times the run's first training step (its trace, compile, autotune)
    from the epoch's beginning, reading the step's logs (which waits for
    it), into ``adapter.first_step_seconds``; Keras 2 and 3 alike."""

    class FirstStepTimer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self._start = time.perf_counter()

        def on_batch_end(self, batch, logs=None):
            if adapter.first_step_seconds is None:
                [float(value) for value in (logs or {}).values()]
                adapter.first_step_seconds = time.perf_counter() - self._start

    return FirstStepTimer()


def epoch_timer(keras):
    """Times one epoch as Keras itself does, from ``on_epoch_begin`` to
    ``on_epoch_end``: the training loop without fit()'s per-call set-up,
    which the harness records separately as the call's wall time."""

    class EpochTimer(keras.callbacks.Callback):
        seconds = None

        def on_epoch_begin(self, epoch, logs=None):
            self._start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            # Reading the values waits for any asynchronously dispatched work.
            [float(value) for value in (logs or {}).values()]
            self.seconds = time.perf_counter() - self._start

    return EpochTimer()
