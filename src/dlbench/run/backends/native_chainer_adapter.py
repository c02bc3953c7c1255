"""Chainer behind the harness: the workloads' chainer modules
(dlbench/models/workloads/<model>/in_chainer.py) run define-by-run on the CPU with
iDeep (MKL-DNN, Chainer's documented CPU acceleration; numpy's im2col and
BLAS where it is missing), a hand-written loop with chainer.optimizers, the
same batches in the same order as every other backend. chainer is imported
in ``setup``, after the BLAS thread variables are set. Importable on Python
3.6.

mixed_float16 is Chainer's documented mixed precision: ``chainer.mixed16``
as the default dtype (float16 parameters and activations, batch
normalization in float32), float32 master copies of the parameters in the
optimizer (``use_fp32_update``) and Chainer's dynamic loss scaling. Chainer
has no bfloat16.
"""

import functools
import os
import time

import numpy

from dlbench import catalog
from dlbench.host import runtime
from dlbench.models import initial_weights
from dlbench.models.layers import chainer_layers
from dlbench.models.programs import in_chainer as program
from dlbench.run import manifest
from dlbench.run.backends import native


class Adapter(native.NativeAdapter):
    backend = "native-chainer"

    def setup(self, threads, seed, devices, parallel=None):
        self._start(threads, devices, parallel)
        os.environ.update(runtime.thread_environment(threads))  # BLAS and OpenMP pools
        manifest.prepare(self.requested.get("precision", catalog.FLOAT32))
        import chainer

        self.chainer = chainer
        numpy.random.seed(seed)  # initialisers and dropout masks draw from numpy
        self.mixed16 = self.requested.get("precision", catalog.FLOAT32) == "mixed_float16"
        chainer.global_config.dtype = chainer.mixed16 if self.mixed16 else numpy.float32
        # iDeep (MKL-DNN) is Chainer's documented CPU acceleration: its
        # functions take over where it is installed, numpy where not.
        self.ideep = chainer.backends.intel64.is_ideep_available()
        chainer.global_config.use_ideep = "auto" if self.ideep else "never"
        self.applied.update(
            {
                "blas_threads": int(os.environ["OPENBLAS_NUM_THREADS"]),
                "omp_threads": int(os.environ["OMP_NUM_THREADS"]),
                "use_ideep": chainer.global_config.use_ideep,
                "dtype": "mixed16" if self.mixed16 else "float32",
                "device": "@intel64 (iDeep)" if self.ideep else "@numpy",
            }
        )
        # Chainer computes with numpy (and iDeep) on the calling thread.
        self.read_manifest = lambda: manifest.host_manifest(
            "Chainer", threads, "define-by-run (no compiler)"
        )
        if self.mixed16:
            masters = "float16 (float32 master copies)"
            self._precision_applied("mixed_float16", variable_dtype=masters)
            self.applied["precision"]["loss_scaling"] = (
                "dynamic (Chainer's optimizer.loss_scaling(): from 1, x2 a step until a "
                "non-finite gradient, then x2 per 1000 steps, halved on each)"
            )

    def versions(self):
        found = {
            "framework": "chainer",
            "framework_version": self.chainer.__version__,
            "numpy": numpy.__version__,
        }
        if self.ideep:
            found["ideep"] = self.chainer.backends.intel64.ideep.__version__
        return found

    def build(self, model_name, data_spec, hyper):
        chainer = self.chainer
        net = self.registry.builder(model_name, "chainer")(chainer, data_spec)
        net.to_device("@intel64" if self.ideep else "@numpy")
        model = {"net": net, "step": 0}
        if "optimizer" in hyper:
            settings = hyper["optimizer"]
            optimizer, model["lr_name"] = chainer_layers.optimizer(chainer, settings, native)
            optimizer.setup(net)
            if self.mixed16:  # float16 gradients underflow unscaled
                optimizer.use_fp32_update()
                optimizer.loss_scaling()
            model.update(optimizer=optimizer, settings=settings)
        return model

    def _inputs(self, x, y=None):
        """Channels-first inputs in the dtype the model computes in (and the
        class indices), converted once, before any clock."""
        converted = native.channels_first(x, y)
        if not self.mixed16:
            return converted
        if y is None:
            return converted.astype(numpy.float16)
        return converted[0].astype(numpy.float16), converted[1]

    def _logits(self, net, x):
        """The model's outputs in float32: losses and softmax are computed in
        float32 under mixed precision, as the other frameworks do."""
        logits = net(x)
        if self.mixed16:
            self.computed_dtype = str(logits.dtype)
            logits = self.chainer.functions.cast(logits, numpy.float32)
        return logits

    def load_initial_weights(self, model, layout, weights):
        """Assigned on the CPU's numpy arrays, then moved back: copied into
        iDeep's arrays directly, convolution weights came out reordered
        (measured: the cnn's outputs 0.019 from Keras' on the same weights)."""
        net = model["net"]
        net.to_device("@numpy")
        parameters = list(net.params())
        values = initial_weights.assign_by_shape(
            [p.shape for p in parameters],
            initial_weights.channels_first(layout, weights),
            "Chainer",
        )
        for parameter, value in zip(parameters, values):
            parameter.array[...] = value
        net.to_device("@intel64" if self.ideep else "@numpy")

    @staticmethod
    def parameter_count(model):
        return sum(param.size for param in model["net"].params())

    def train_epoch(self, model, x, y, batch_size):
        # like fit()'s set-up: outside the epoch's time
        inputs, labels = self._inputs(x, y)
        start = time.perf_counter()
        net, optimizer, settings = model["net"], model["optimizer"], model["settings"]

        def next_rate():  # Keras 2's decay: the rate of the step to come
            if settings.get("decay") and model["lr_name"]:
                rate = native.learning_rate(settings, model["step"])
                setattr(optimizer.hyperparam, model["lr_name"], rate)

        def after_step():
            model["step"] += 1
            next_rate()
            self._time_first_step(start)

        next_rate()
        # optimizer.update scales the loss under mixed16 and skips the update
        # on a non-finite gradient
        total_loss, correct = program.train_epoch(
            self.chainer,
            functools.partial(self._logits, net),
            optimizer,
            ((inputs[part], labels[part]) for part in native.batches(len(labels), batch_size)),
            after_step,
        )
        n = len(labels)
        result = {"loss": total_loss / n, "accuracy": correct / n}
        result["seconds"] = time.perf_counter() - start
        return result

    def evaluate(self, model, x, y, batch_size):
        F = self.chainer.functions
        inputs, labels = self._inputs(x, y)
        total_loss, correct = 0.0, 0
        with self.chainer.using_config("train", False), self.chainer.no_backprop_mode():
            for part in native.batches(len(labels), batch_size):
                logits = self._logits(model["net"], inputs[part])
                total_loss += float(F.softmax_cross_entropy(logits, labels[part]).array) * len(
                    labels[part]
                )
                correct += int((numpy.asarray(logits.array).argmax(axis=1) == labels[part]).sum())
        return total_loss / len(labels), correct / len(labels)

    def predict(self, model, x):
        forward = functools.partial(self._logits, model["net"])
        return program.predict(self.chainer, forward, self._inputs(x))

    def training_outputs(self, model, x, draws):
        """The softmaxed outputs in training mode (F.dropout draws a fresh
        mask from numpy each call), ``draws`` times: the equivalence check's
        dropout draws."""
        chainer = self.chainer
        inputs, found = self._inputs(x), []
        with chainer.using_config("train", True), chainer.no_backprop_mode():
            for _ in range(draws):
                logits = self._logits(model["net"], inputs)
                found.append(numpy.asarray(chainer.functions.softmax(logits).array))
        return numpy.stack(found)
