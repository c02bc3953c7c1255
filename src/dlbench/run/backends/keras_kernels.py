"""Which implementation Keras' GRU and LSTM layers ran (cuDNN, the
backend's own CPU code, Keras' generic loop), read by probes around the
functions they call, for the record; what a framework's own function
computes with, its module in keras_on says (``recurrent_kernel``,
``probe_recurrent_paths``). Importable on Python 3.6."""


class RecurrentKernelProbes(object):
    """The Keras adapter's probes: its ``setup`` installs them on devices."""

    def _probe_recurrent_kernels(self, devices):
        """Record which implementation Keras' GRU and LSTM layers ran. They
        first call the backend's own function (``keras.src.backend.gru`` /
        ``lstm``: cuDNN on a GPU where the backend's checks pass, its own CPU
        code or nothing otherwise) and fall back to Keras' generic recurrent
        loop when that raises NotImplementedError; the probe sees which way
        the call went. Where the own function chooses inside itself (torch),
        the framework's probes of its paths record the one taken."""
        from keras.src import backend as keras_backend  # the module the RNN layers call

        describe = getattr(self.on, "recurrent_kernel", None)
        probe_paths = getattr(self.on, "probe_recurrent_paths", None)
        for name in ("gru", "lstm"):
            own = getattr(keras_backend, name, None)
            if own is not None:
                if describe is not None:
                    described = describe(name, devices)
                else:
                    described = own_recurrent_kernel(self.framework, name, devices)
                if probe_paths is not None and probe_paths(self, name):
                    described = None  # the path taken records itself
                setattr(keras_backend, name, self._kernel_probe(name, own, described))

    def _kernel_probe(self, name, own, described):
        def probe(*args, **kwargs):
            try:
                outputs = own(*args, **kwargs)
            except NotImplementedError:
                self.recurrent_kernels[name] = "Keras' generic recurrent loop"
                raise
            if described is not None:
                self.recurrent_kernels[name] = described
            return outputs

        return probe


def own_recurrent_kernel(framework, name, devices):
    """What a Keras 3 backend's own GRU/LSTM function computes with, once it
    has accepted the layer, where its module in keras_on does not say:
    the backend's own, cuDNN's on a GPU."""
    where = "GPU: cuDNN" if devices else "CPU"
    return "{}'s own {} ({})".format(framework, name.upper(), where)
