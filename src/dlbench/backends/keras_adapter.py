"""One adapter for every Keras backend: Keras 3 on TensorFlow, JAX or torch.

The framework is imported in ``setup``, after the harness pinned the process
to its CPUs, because several frameworks size their thread pools on import.
Importable on Python 3.6.
"""

import os
import time

from dlbench.models import keras_models


class Adapter(object):
    devices_not_supported = (
        "devices={}: GPU and data-parallel runs are not built yet; use devices: [0]"
    )

    def __init__(self, framework, settings):
        self.framework = framework
        self.requested = dict(settings)
        self.applied = {}
        self.keras = None
        self.jit_compile = None
        self.recurrent_kernels = {}

    def setup(self, threads, seed, devices):
        if devices:
            raise NotImplementedError(self.devices_not_supported.format(devices))
        os.environ["KERAS_BACKEND"] = self.framework
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        getattr(self, "_setup_" + self.framework)(threads, seed)
        import keras

        self.keras = keras
        self._seed_and_probe(seed, devices)
        self.applied.update(
            {
                "keras_backend": keras.backend.backend(),
                "threads": threads,
                "dtype": keras.backend.floatx(),
                "image_data_format": keras.backend.image_data_format(),
            }
        )

    def _seed_and_probe(self, seed, devices):
        self._probe_recurrent_kernels(devices)
        self.keras.utils.set_random_seed(seed)

    def _setup_tensorflow(self, threads, seed):
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        self.applied.update({"intra_op_threads": threads, "inter_op_threads": 1})

    def _setup_jax(self, threads, seed):
        # XLA's CPU pool follows the process' CPU affinity; one thread needs
        # the flags as well, or Eigen still starts its pool.
        if threads == 1:
            flags = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
            os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flags).strip()
        self.applied["xla_flags"] = os.environ.get("XLA_FLAGS", "")

    def _setup_torch(self, threads, seed):
        import torch

        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)
        # Denormal numbers slow torch's CPU kernels many times over;
        # TensorFlow and XLA flush them by default.
        torch.set_flush_denormal(True)
        self.applied.update(
            {"intra_op_threads": threads, "inter_op_threads": 1, "flush_denormal": True}
        )

    def _setup_openvino(self, threads, seed):
        # OpenVINO's CPU plugin sizes its pool from the process' CPU affinity.
        self.applied["inference_engine"] = "OpenVINO CPU plugin (Keras predict graph)"

    def _probe_recurrent_kernels(self, devices):
        """Record which implementation Keras' GRU and LSTM layers ran. They
        first call the backend's own function (``keras.src.backend.gru`` /
        ``lstm``: cuDNN on a GPU where the backend's checks pass, its own CPU
        code or nothing otherwise) and fall back to Keras' generic recurrent
        loop when that raises NotImplementedError; the probe sees which way
        the call went."""
        from keras.src import backend as keras_backend  # the module the RNN layers call

        where = "GPU: cuDNN where the backend's checks pass" if devices else "CPU"
        for name in ("gru", "lstm"):
            own = getattr(keras_backend, name, None)
            if own is not None:
                setattr(keras_backend, name, self._kernel_probe(name, own, where))

    def _kernel_probe(self, name, own, where):
        def probe(*args, **kwargs):
            try:
                outputs = own(*args, **kwargs)
            except NotImplementedError:
                self.recurrent_kernels[name] = "Keras' generic recurrent loop"
                raise
            self.recurrent_kernels[name] = "{}'s own {} ({})".format(
                self.framework, name.upper(), where
            )
            return outputs

        return probe

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
        found.update(getattr(self, "_versions_" + self.framework, lambda module: {})(module))
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

    def settings(self):
        found = dict(self.applied)
        found["jit_compile"] = self.jit_compile
        found["inference_call"] = "predict_on_batch"
        if self.recurrent_kernels:
            found["recurrent_kernels"] = dict(self.recurrent_kernels)
        return found

    def build(self, model_name, data_spec, hyper):
        keras = self.keras
        model = keras_models.BUILDERS[model_name](keras, data_spec)
        settings = {"jit_compile": self.requested.get("jit_compile", "auto")}
        if "optimizer" in hyper:  # training; inference compiles only the jit choice
            settings.update(
                optimizer=keras_models.optimizer(keras, hyper["optimizer"]),
                loss=hyper["loss"],
                metrics=["accuracy"],
            )
        model.compile(**settings)
        # What Keras resolved "auto" (or a request it could not honour) to.
        self.jit_compile = bool(model.jit_compile)
        return model

    @staticmethod
    def parameter_count(model):
        return int(model.count_params())

    def train_epoch(self, model, x, y, batch_size):
        timer = epoch_timer(self.keras)
        history = model.fit(
            x,
            y,
            batch_size=batch_size,
            epochs=1,
            shuffle=False,
            verbose=0,
            callbacks=[timer],
        )
        return {
            "seconds": timer.seconds,
            "loss": float(history.history["loss"][-1]),
            "accuracy": float(history.history["accuracy"][-1]),
        }

    @staticmethod
    def evaluate(model, x, y, batch_size):
        scores = model.evaluate(x, y, batch_size=batch_size, verbose=0, return_dict=True)
        return float(scores["loss"]), float(scores["accuracy"])

    @staticmethod
    def predict(model, x):
        # Keras' documented call for one batch: the compiled predict step
        # without fit/predict's per-call data pipeline.
        return model.predict_on_batch(x)

    def synchronize(self):
        pass  # fit() and evaluate() return host values: device work is done

    def peak_device_memory_mb(self):
        return None  # CPU runs; GPU memory comes with device support


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
