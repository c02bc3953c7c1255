"""Keras 2 (2.2 and 2.3) on the seed systems: Theano, CNTK and MXNet.

A small compatibility layer lets the Keras 3 model definitions of
``in_keras`` builders of dlbench.models.workloads build unchanged (same layers, same parameter
counts), and maps the config's optimizer settings onto Keras 2's
constructors, whose ``decay`` is the original form of the schedule the Keras
3 adapter rebuilds. Importable on Python 3.6 (CNTK's last wheels are cp36).
"""

import os
import random
import sys
import time

from dlbench.models.layers import MAX_POOL_TIES, dropout_on, keras_layers
from dlbench.models.programs import in_keras as program
from dlbench.run import manifest
from dlbench.run.backends import frameworks, keras_adapter

# Keras 3 optimizer settings that Keras 2's optimizer lacks, with the only
# value Keras 2 runs.
KERAS2_FIXED = {"rmsprop": {"momentum": 0.0, "centered": False}}


# Where Keras 2 computes other than Keras 3 (the record's settings.own_rules;
# the equivalence check expects such a backend's steps to depart): an
# optimizer's update rule (on Theano and CNTK; keras-mxnet's are MXNet's),
# and on Theano two gradients, measured.
OWN_RULES = {"rmsprop": "Keras 2's RMSprop: epsilon after the square root (Keras 3: under it)"}
THEANO_RELU = "ReLU's gradient at 0 is 0.5 (Theano's relu, (x + |x|) / 2; Keras 3's backends: 0)"


class Keras2Layers(object):
    """``keras.layers`` with Keras 3's defaults where Keras 2's differ: the
    GRU's ``reset_after=True`` (Keras 3's and cuDNN's formulation, with two
    bias vectors; Keras 2 defaulted to the original one), and the LSTM's and
    GRU's ``recurrent_activation="sigmoid"`` (Keras 2.2, keras-mxnet's,
    defaulted to ``hard_sigmoid``; 2.3 to ``sigmoid``). Dropout at rate 0
    while the equivalence check turns it off (dlbench.models.layers.set_dropout).

    With ``unroll``, recurrent layers are unrolled over their (fixed) time
    steps. Keras 2 on MXNet and on CNTK needs it, measured against numpy
    with the same weights: keras-mxnet 2.2.4.3's loop over time on MXNet 1.9
    (``mx.sym.contrib.foreach``) returns zeros, and Keras 2.3.1's on CNTK
    2.7 returns an LSTM's cell state where its output belongs; unrolled,
    both agree with numpy to 4e-8."""

    def __init__(self, layers, unroll=False):
        self._layers = layers
        self._unroll = unroll

    def __getattr__(self, name):
        return getattr(self._layers, name)

    def _recurrent(self, kind, units, kwargs):
        if self._unroll:
            kwargs.setdefault("unroll", True)
        return getattr(self._layers, kind)(units, **kwargs)

    def GRU(self, units, **kwargs):  # noqa: N802 - Keras' own name
        kwargs.setdefault("reset_after", True)
        kwargs.setdefault("recurrent_activation", "sigmoid")
        return self._recurrent("GRU", units, kwargs)

    def LSTM(self, units, **kwargs):  # noqa: N802 - Keras' own name
        kwargs.setdefault("recurrent_activation", "sigmoid")
        return self._recurrent("LSTM", units, kwargs)

    def SimpleRNN(self, units, **kwargs):  # noqa: N802 - Keras' own name
        return self._recurrent("SimpleRNN", units, kwargs)

    def Dropout(self, rate, **kwargs):  # noqa: N802 - Keras' own name
        # Keras 2 builds its graph as layers are called, when the model is
        # defined: a rate changed afterwards would not reach it. Turned off,
        # no layer at all: an identity layer makes Keras 2 copy its input
        # with K.identity, which keras-mxnet evaluates and cannot bind.
        return self._layers.Dropout(rate, **kwargs) if dropout_on() else NO_DROPOUT


class _NoDropout(object):
    """Dropout turned off: its input, unchanged (left out of a Sequential)."""

    def __call__(self, inputs, **kwargs):
        return inputs


NO_DROPOUT = _NoDropout()


class Keras2Namespace(object):
    """``keras`` as the model definitions use it. Keras 2's ``Sequential``
    takes no ``Input`` tensor as its first entry; it becomes an InputLayer
    of the same shape and type, which builds the same model."""

    def __init__(self, keras, unroll_recurrent=False):
        self._keras = keras
        self.layers = Keras2Layers(keras.layers, unroll_recurrent)

    def __getattr__(self, name):
        return getattr(self._keras, name)

    def Sequential(self, layers, name=None):  # noqa: N802 - Keras' own name
        layers = [layer for layer in layers if layer is not NO_DROPOUT]
        if layers and hasattr(layers[0], "_keras_history"):
            backend = self._keras.backend
            layers[0] = self._keras.layers.InputLayer(
                batch_input_shape=backend.int_shape(layers[0]), dtype=backend.dtype(layers[0])
            )
        return self._keras.Sequential(layers, name=name)


def optimizer(keras, settings):
    """The config's optimizer for Keras 2: ``learning_rate`` as ``lr``,
    ``decay`` as Keras 2 applies it (lr / (1 + decay * iterations)).
    Settings Keras 2 does not have are accepted only at the value that is
    Keras 2's fixed behaviour, and refused otherwise."""
    kwargs = dict(settings)
    name = kwargs.pop("name")
    kwargs["lr"] = kwargs.pop("learning_rate")  # 2.2 knows only lr; 2.3 both
    for key, only in KERAS2_FIXED.get(name, {}).items():
        if key in kwargs:
            value = kwargs.pop(key)
            if value != only:
                raise ValueError(
                    "optimizer {}: {}={} has no Keras 2 equivalent (Keras 2 runs {}={})".format(
                        name, key, value, key, only
                    )
                )
    return getattr(keras.optimizers, keras_layers.OPTIMIZERS[name])(**kwargs)


# Theano computes in its C ops on the calling thread, with numpy's BLAS:
# the manifest's numpy probe sees what they do.
PROBES = {"mxnet": manifest.mxnet_probe, "cntk": manifest.cntk_probe}


class Adapter(keras_adapter.Adapter):
    def setups(self):
        return {
            "theano": self._setup_theano,
            "mxnet": self._setup_mxnet,
            "cntk": self._setup_cntk,
        }

    def distributors(self):
        return {"mxnet": self._distribute_mxnet}

    def version_readers(self):
        return {}

    def _seed_and_probe(self, seed, devices):
        # Keras 2 has no set_random_seed; the framework was seeded in setup.
        import numpy

        random.seed(seed)
        numpy.random.seed(seed)

    def _setup_theano(self, threads, seed):
        # Theano reads its flags on import. numpy.distutils on this Python
        # finds no BLAS to link (no blas_opt_info), so Theano is told to use
        # its NumPy C-API BLAS (numpy's own OpenBLAS underneath, threaded by
        # OMP/OPENBLAS_NUM_THREADS). openmp stays off: with it, Theano 1.0.5's
        # compiled convolution aborted Python 3.9 ("PyEval_SaveThread: ...
        # the GIL is released").
        # Compiled ops are cached per environment (rebuilt with it); the
        # record says whether this run found the cache warm, which makes its
        # first epoch shorter than a fresh machine's.
        cache = os.path.join(sys.prefix, "theano-cache")
        self.applied["theano_cache_warm"] = frameworks.cache_is_warm(cache)
        flags = {
            "floatX": "float32",
            "device": "cpu",
            "blas.ldflags": "",
            "openmp": False,
            "base_compiledir": cache,
            "gcc.cxxflags": frameworks.gxx_flags(self.requested),
        }
        compiler = frameworks.precompiled_headers_compiler(self.requested, cache)
        if compiler:
            flags["cxx"] = compiler
        os.environ["THEANO_FLAGS"] = ",".join(
            "{}={}".format(key, value) for key, value in sorted(flags.items())
        )
        self.applied["theano_flags"] = os.environ["THEANO_FLAGS"]

    def _setup_mxnet(self, threads, seed):
        import mxnet

        mxnet.random.seed(seed)
        self.applied["mxnet_engine"] = os.environ.get(
            "MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice (default)"
        )
        self.applied["omp_threads"] = os.environ.get("OMP_NUM_THREADS")

    def _distribute_mxnet(self, devices):
        """keras-mxnet's own data parallelism: compile(context=[...]) gives
        MXNet's Module one executor per device; each batch is split over
        them and the gradients summed. Emulated devices are executors on the
        CPU (keras-mxnet maps every 'cpu(i)' to cpu(0))."""
        import mxnet

        if self.emulated:
            self.mxnet_context = ["cpu({})".format(i) for i in range(devices)]
        else:
            found = mxnet.context.num_gpus()
            if found < devices:
                raise frameworks.no_gpus(
                    self.framework, devices, "{} GPU(s)".format(found) if found else None
                )
            self.mxnet_context = ["gpu({})".format(i) for i in range(devices)]

    def _host_manifest(self, threads):
        probe = PROBES.get(self.framework)
        return manifest.host_manifest(
            self.framework,
            threads,
            "{} graph (Keras 2)".format(self.framework),
            probe=probe,
            deterministic=(
                os.environ.get("MXNET_ENFORCE_DETERMINISM", "0") == "1"
                if self.framework == "mxnet"
                else None
            ),
            onednn=self.framework != "theano",
        )

    def _one_device(self):
        """keras-mxnet on one device: its context names that device (a
        context of one is keras-mxnet's single-device program)."""
        if self.framework == "mxnet":
            self._distribute_mxnet(1)

    def _setup_cntk(self, threads, seed):
        import cntk

        cntk.device.try_set_default_device(cntk.device.cpu())
        cntk.cntk_py.set_fixed_random_seed(seed)
        cntk.cntk_py.set_max_num_cputhreads(threads)
        self.applied["cntk_device"] = "cpu"
        self.applied["cntk_max_cpu_threads"] = cntk.cntk_py.get_max_num_cputhreads()

    def synchronize(self):
        if self.framework == "mxnet":  # its engine runs operators asynchronously
            import mxnet

            mxnet.nd.waitall()

    def load_initial_weights(self, model, manifest, weights):
        """Keras 2's Theano backend computes a true convolution (its kernels
        flipped against every other backend's cross-correlation, what
        keras.utils.conv_utils.convert_kernel converts): measured, the
        shared weights unflipped gave the cnn outputs 0.008 from Keras 3's,
        flipped 1.5e-8. The other Keras 2 backends take them as they are."""
        if self.framework == "theano":
            weights = [
                values[::-1, ::-1].copy()
                if entry["class"] == "Conv2D" and entry["variable"] == "kernel"
                else values
                for entry, values in zip(manifest["weights"], weights)
            ]
        keras_adapter.Adapter.load_initial_weights(model, manifest, weights)

    def build(self, model_name, data_spec, hyper):
        keras = self.keras
        unroll = self.framework in ("mxnet", "cntk")
        namespace = Keras2Namespace(keras, unroll_recurrent=unroll)
        model = self.registry.builder(model_name, "keras")(namespace, data_spec)
        settings = {}
        if self.framework == "mxnet":
            # Without a context keras-mxnet takes the first GPU nvidia-smi
            # lists, whatever CUDA_VISIBLE_DEVICES says: name the devices.
            settings["context"] = getattr(self, "mxnet_context", None) or ["cpu"]
            self.applied["mxnet_context"] = settings["context"]
        if "optimizer" in hyper:
            self.applied["own_rules"] = self._own_rules(model, hyper["optimizer"]["name"])
            made = optimizer(keras, hyper["optimizer"])
            program.compile_model(model, made, hyper["loss"], **settings)
        elif settings:  # inference compiles too on MXNet, for the context only
            model.compile(optimizer="sgd", loss="categorical_crossentropy", **settings)
        for layer in _all_layers(model):
            kind = type(layer).__name__
            if kind in ("GRU", "LSTM"):
                self.recurrent_kernels[kind.lower()] = "Keras 2 {} on {}'s rnn loop{}".format(
                    kind, self.framework, ", unrolled" if unroll else ""
                )
        return model

    def _own_rules(self, model, optimizer_name):
        # keras-mxnet's optimizers are MXNet's (RMSProp: epsilon under the root)
        own = optimizer_name in OWN_RULES and self.framework != "mxnet"
        rules = [OWN_RULES[optimizer_name]] if own else []
        if self.framework == "theano":
            layers = list(_all_layers(model))
            if any(type(layer).__name__ == "MaxPooling2D" for layer in layers):
                rules.append(MAX_POOL_TIES)
            activations = {
                getattr(getattr(layer, "activation", None), "__name__", None) for layer in layers
            }
            if "relu" in activations:
                rules.append(THEANO_RELU)
        return rules

    def train_epoch(self, model, x, y, batch_size):
        # Keras 2 compiles the training function in fit's set-up, before the
        # epoch begins (Keras 3 on its first batch): timed here and counted
        # in the first epoch, so that first epochs compare across versions.
        compile_seconds = 0.0
        if getattr(model, "train_function", None) is None:
            start = time.perf_counter()
            model._make_train_function()
            compile_seconds = time.perf_counter() - start
        timer = keras_adapter.epoch_timer(self.keras)
        callbacks = [timer]
        first = self.first_step_seconds is None
        if first:
            callbacks.append(keras_adapter.first_step_timer(self.keras, self))
        history = program.train_epoch(model, x, y, batch_size, callbacks)
        if first and self.first_step_seconds is not None:
            self.first_step_seconds += compile_seconds
        accuracy = history["accuracy"] if "accuracy" in history else history["acc"]  # 2.3 / 2.2
        return {
            "seconds": compile_seconds + timer.seconds,
            "loss": float(history["loss"][-1]),
            "accuracy": float(accuracy[-1]),
        }

    @staticmethod
    def evaluate(model, x, y, batch_size):
        loss, accuracy = model.evaluate(x, y, batch_size=batch_size, verbose=0)
        return float(loss), float(accuracy)

    def training_outputs(self, model, x, draws):
        """The model's outputs in training mode, ``draws`` times (Keras 2's
        documented way: a backend function fed learning phase 1; each call
        draws fresh dropout masks): the equivalence check's dropout draws."""
        import numpy

        K = self.keras.backend
        inputs = [x[name] for name in model.input_names] if isinstance(x, dict) else [x]
        function = K.function(list(model.inputs) + [K.learning_phase()], [model.output])
        phase = K.learning_phase()
        subgraphs = os.environ.get("MXNET_SUBGRAPH_BACKEND")
        if self.framework == "mxnet":
            # keras-mxnet keeps a training and a test symbol of each tensor
            # and hands out the one of the global phase (0: no dropout),
            # whatever phase the function is fed. Its function binds without
            # gradients, where MXNet's oneDNN subgraph pass (measured)
            # removes Dropout; fit's executor, with gradients, has none.
            K.set_learning_phase(1)
            os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"
        try:
            return numpy.stack([function(inputs + [1])[0] for _ in range(draws)])
        finally:
            if self.framework == "mxnet":
                K.set_learning_phase(phase)
                if subgraphs is None:
                    os.environ.pop("MXNET_SUBGRAPH_BACKEND")
                else:
                    os.environ["MXNET_SUBGRAPH_BACKEND"] = subgraphs

    def replica_divergence(self, model):
        """MXNet keeps one copy of every weight per executor."""
        if len(getattr(self, "mxnet_context", [])) < 2:
            return None
        module = model._module
        group = getattr(module, "_curr_module", module)._exec_group
        largest = 0.0
        for copies in group.param_arrays:
            first = copies[0].asnumpy()
            for copy in copies[1:]:
                largest = max(largest, float(abs(copy.asnumpy() - first).max()))
        return largest


def _all_layers(model):
    for layer in model.layers:
        yield layer
        inner = getattr(layer, "layer", None)  # TimeDistributed, Bidirectional
        if inner is not None:
            yield inner
