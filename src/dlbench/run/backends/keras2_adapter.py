"""Keras 2 (2.2 and 2.3) on the legacy systems: Theano, CNTK and MXNet.

A small compatibility layer lets the Keras 3 model definitions of
``in_keras`` builders of dlbench.models.workloads build unchanged (same layers, same parameter
counts), and maps the config's optimizer settings onto Keras 2's
constructors, whose ``decay`` is the original form of the schedule the Keras
3 adapter rebuilds. Each framework's own code is its module in keras_on,
picked by the framework's name from ``KERAS_ON``. Importable on Python 3.6
(CNTK's last wheels are cp36).
"""

import contextlib
import random
import time

from dlbench.models.layers import dropout_on, keras_layers
from dlbench.models.programs import in_keras as program
from dlbench.run.backends import keras_adapter
from dlbench.run.backends.keras_on import cntk as keras_on_cntk
from dlbench.run.backends.keras_on import mxnet as keras_on_mxnet
from dlbench.run.backends.keras_on import theano as keras_on_theano

# Each framework's own code under Keras 2, by the framework's name (what a
# module there provides: keras_on's docstring).
KERAS_ON = {
    "theano": keras_on_theano,
    "cntk": keras_on_cntk,
    "mxnet": keras_on_mxnet,
}

# Keras 3 optimizer settings that Keras 2's optimizer lacks, with the only
# value Keras 2 runs.
KERAS2_FIXED = {"rmsprop": {"momentum": 0.0, "centered": False}}


# Where Keras 2 computes other than Keras 3 (the record's settings.own_rules;
# the equivalence check expects such a backend's steps to depart): an
# optimizer's update rule (on Theano and CNTK; keras-mxnet's are MXNet's),
# and on Theano two gradients, measured (keras_on.theano's own_rules).
OWN_RULES = {"rmsprop": "Keras 2's RMSprop: epsilon after the square root (Keras 3: under it)"}


class Keras2Layers(object):
    """``keras.layers`` with Keras 3's defaults where Keras 2's differ: the
    GRU's ``reset_after=True`` (Keras 3's and cuDNN's formulation, with two
    bias vectors; Keras 2 defaulted to the original one), and the LSTM's and
    GRU's ``recurrent_activation="sigmoid"`` (Keras 2.2, keras-mxnet's,
    defaulted to ``hard_sigmoid``; 2.3 to ``sigmoid``). Dropout at rate 0
    while the equivalence check turns it off (dlbench.models.layers.set_dropout).

    With ``unroll``, recurrent layers are unrolled over their (fixed) time
    steps. Keras 2 on MXNet and on CNTK needs it (their modules in keras_on
    say so: UNROLL_RECURRENT), measured against numpy with the same
    weights: keras-mxnet 2.2.4.3's loop over time on MXNet 1.9
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


class Adapter(keras_adapter.Adapter):
    keras_on = KERAS_ON  # {framework: its module of keras_on}

    def _seed_and_probe(self, seed, devices):
        # Keras 2 has no set_random_seed; the framework was seeded in setup.
        import numpy

        random.seed(seed)
        numpy.random.seed(seed)

    def build(self, model_name, data_spec, hyper):
        keras = self.keras
        unroll = getattr(self.on, "UNROLL_RECURRENT", False)
        namespace = Keras2Namespace(keras, unroll_recurrent=unroll)
        model = self.registry.builder(model_name, "keras")(namespace, data_spec)
        compile_settings = self._own("compile_settings")  # keras-mxnet's context
        settings = compile_settings(self) if compile_settings is not None else {}
        if "optimizer" in hyper:
            self.applied["own_rules"] = self.own_rules(model, hyper["optimizer"]["name"])
            made = optimizer(keras, hyper["optimizer"])
            program.compile_model(model, made, hyper["loss"], **settings)
        elif settings:  # inference compiles too on MXNet, for the context only
            model.compile(optimizer="sgd", loss="categorical_crossentropy", **settings)
        for layer in self.layers(model):
            kind = type(layer).__name__
            if kind in ("GRU", "LSTM"):
                self.recurrent_kernels[kind.lower()] = "Keras 2 {} on {}'s rnn loop{}".format(
                    kind, self.framework, ", unrolled" if unroll else ""
                )
        return model

    def own_rules(self, model, optimizer_name):
        # Keras 2's optimizers, where the framework's are not its own (keras-mxnet's)
        keras2_optimizers = getattr(self.on, "KERAS2_OPTIMIZERS", True)
        own = optimizer_name in OWN_RULES and keras2_optimizers
        rules = [OWN_RULES[optimizer_name]] if own else []
        return rules + super(Adapter, self).own_rules(model, optimizer_name)

    @staticmethod
    def layers(model):
        """The model's layers, and the one inside each wrapper
        (TimeDistributed, Bidirectional)."""
        for layer in model.layers:
            yield layer
            inner = getattr(layer, "layer", None)
            if inner is not None:
                yield inner

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
        training_phase = self._own("training_phase")  # keras-mxnet's global phase
        # (an empty ExitStack: no context where the framework needs none)
        with training_phase(self) if training_phase is not None else contextlib.ExitStack():
            return numpy.stack([function(inputs + [1])[0] for _ in range(draws)])
