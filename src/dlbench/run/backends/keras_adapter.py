"""One adapter for every Keras backend: Keras 3 on TensorFlow, JAX, torch or
OpenVINO, what they share; each framework's own code is its module in
keras_on, picked by the framework's name from ``KERAS_ON``.

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
from dlbench.run import launch, manifest
from dlbench.run.backends import base, frameworks, keras_kernels, keras_parallel
from dlbench.run.backends.keras_on import jax as keras_on_jax
from dlbench.run.backends.keras_on import openvino as keras_on_openvino
from dlbench.run.backends.keras_on import tensorflow as keras_on_tensorflow
from dlbench.run.backends.keras_on import torch as keras_on_torch

# Each framework's own code under Keras 3, by the framework's name (what a
# module there provides: keras_on's docstring).
KERAS_ON = {
    "tensorflow": keras_on_tensorflow,
    "jax": keras_on_jax,
    "torch": keras_on_torch,
    "openvino": keras_on_openvino,
}


def without_dropout(layers):
    """Keras 3's Dropout layers at rate 0, which pass their inputs through:
    for the equivalence check (dlbench.models.layers.set_dropout). Keras 3 reads
    the rate when a step is traced, after the model is built."""
    for layer in layers:
        if "Dropout" in type(layer).__name__ and hasattr(layer, "rate"):
            layer.rate = 0.0


class Adapter(keras_parallel.KerasDataParallel, keras_kernels.RecurrentKernelProbes, base.Adapter):
    devices_not_supported = "devices={}: {} has no data-parallel training here"
    keras_on = KERAS_ON  # {framework: its module of keras_on}

    def __init__(self, framework, settings):
        super(Adapter, self).__init__(framework, settings)
        self.on = self.keras_on[framework]  # the framework's own code
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
        if devices and self._own("distribute") is None:
            raise NotImplementedError(self.devices_not_supported.format(devices, self.framework))
        self.emulated = bool(devices) and self.parallel["accelerator"] == "emulated-cpu"
        os.environ["KERAS_BACKEND"] = self.framework
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        manifest.prepare(self.precision)
        self.on.setup(self, threads, seed)
        import keras

        self.keras = keras
        if catalog.mixed(self.precision) and self._keras_precision():
            keras.config.set_dtype_policy(self.precision)
        if launch.distributes(self.parallel):
            self.on.distribute(self, devices)
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
        set_hidden_settings = self._own("set_hidden_settings")
        if set_hidden_settings is not None:
            set_hidden_settings(self)
        self.read_manifest = lambda: self.on.read_manifest(self, threads)

    def _own(self, name):
        """The framework's own ``name`` in its module of keras_on, None
        where it has none (keras_on's docstring lists them)."""
        return getattr(self.on, name, None)

    def _keras_precision(self):
        """Whether the run's precision is Keras' dtype policy (OpenVINO's is
        its plugin's hint)."""
        return getattr(self.on, "KERAS_PRECISION", True)

    @property
    def on_gpu(self):
        return bool(self.parallel["devices"]) and not self.emulated

    def compile_mode(self, compiler, eager="eager"):
        """What runs the steps, as far as known before ``build`` resolves
        Keras' "auto" (``settings`` says what ran): ``compiler`` where Keras
        compiles them, ``eager`` where it does not; for the manifest."""
        jit = self.jit_compile
        if jit is None:
            jit = self.requested.get("jit_compile", "auto")
        if jit is True:
            return "{} (Keras jit_compile)".format(compiler)
        if jit is False:
            return eager
        return "Keras' jit_compile=auto"

    def _seed_and_probe(self, seed, devices):
        self._probe_recurrent_kernels(devices)
        self.keras.utils.set_random_seed(seed)

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
        found.update(self.on.versions(module))
        return found

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
                rules = self.own_rules(model, hyper["optimizer"]["name"])
                if rules:
                    self.applied["own_rules"] = rules
            else:  # inference compiles only the jit choice
                model.compile(**settings)
        # What Keras resolved "auto" (or a request it could not honour) to.
        self.jit_compile = bool(model.jit_compile)
        built = self._own("built")
        if built is not None:  # torch: what torch.compile ran with, DistributedDataParallel
            built(self, model)
        if self._keras_precision() and hasattr(model, "dtype_policy"):  # Keras 3
            self.applied["precision"] = precision_that_ran(model, self.precision)
        return model

    def own_rules(self, model, optimizer_name):
        """Where this backend computes other than Keras 3 on JAX and torch."""
        framework_rules = self._own("own_rules")
        return framework_rules(self, model, optimizer_name) if framework_rules is not None else []

    @staticmethod
    def parameter_count(model):
        return int(model.count_params())

    def load_initial_weights(self, model, layout, weights):
        """The shared initial weights (dlbench.models.initial_weights): Keras'
        own layout and order, Keras 2's too, where the framework does not
        convert them (its ``initial_weights``)."""
        convert = self._own("initial_weights")
        if convert is not None:
            weights = convert(layout, weights)
        initial_weights.check_shapes([w.shape for w in model.get_weights()], layout)
        model.set_weights(weights)

    def train_epoch(self, model, x, y, batch_size):
        timer = epoch_timer(self.keras)
        callbacks = [timer] + ([step_waiter(self.keras)] if self.step_sync else [])
        if self.first_step_seconds is None:  # the run's first epoch
            callbacks.append(first_step_timer(self.keras, self))
        epoch_begins = self._own("epoch_begins")
        if epoch_begins is not None:  # torch: every process starts its epoch together
            epoch_begins(self)
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
        divergence = self._own("replica_divergence")
        return divergence(self, model) if divergence is not None else None

    @staticmethod
    def evaluate(model, x, y, batch_size):
        scores = model.evaluate(x, y, batch_size=batch_size, verbose=0, return_dict=True)
        return float(scores["loss"]), float(scores["accuracy"])

    def recurrent_ops(self, model, x):
        """Keras on torch: which recurrent operators its GRU/LSTM ran (None
        elsewhere)."""
        recurrent_ops = self._own("recurrent_ops")
        return recurrent_ops(self, model, x) if recurrent_ops is not None else None

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
        """For the equivalence check, where the framework hands the optimizer
        other than JAX and torch do (keras_on.tensorflow): what it changed,
        for the check's record; {} elsewhere."""
        prepare_check = self._own("prepare_check")
        return prepare_check(self, model, hyper) if prepare_check is not None else {}

    def synchronize(self):
        """fit() and evaluate() return host values: device work is done,
        except in a framework that runs its operators asynchronously."""
        synchronize = self._own("synchronize")
        if synchronize is not None:
            synchronize(self)

    def close(self):
        close = self._own("close")
        if close is not None:  # torch: torchrun's process group
            close(self)

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
