"""Which implementation Keras' GRU and LSTM layers ran (cuDNN, the
backend's own CPU code, Keras' generic loop), read by probes around the
functions they call, for the record. Importable on Python 3.6."""

import importlib

# Keras 3's torch GRU/LSTM where it does not call cuDNN: the CPU, torch.compile.
TORCH_LOOP = (
    "Keras' torch {} loop: input projections in one product, then one recurrent "
    "product and the gates per time step (no cuDNN: the CPU, or under torch.compile)"
)


class RecurrentKernelProbes(object):
    """The Keras adapter's probes: its ``setup`` installs them on devices."""

    def _probe_recurrent_kernels(self, devices):
        """Record which implementation Keras' GRU and LSTM layers ran. They
        first call the backend's own function (``keras.src.backend.gru`` /
        ``lstm``: cuDNN on a GPU where the backend's checks pass, its own CPU
        code or nothing otherwise) and fall back to Keras' generic recurrent
        loop when that raises NotImplementedError; the probe sees which way
        the call went. On torch the own function chooses inside itself."""
        from keras.src import backend as keras_backend  # the module the RNN layers call

        for name in ("gru", "lstm"):
            own = getattr(keras_backend, name, None)
            if own is not None:
                described = own_recurrent_kernel(self.framework, name, devices)
                if self.framework == "torch" and self._probe_torch_paths(name):
                    described = None  # the path taken records itself
                setattr(keras_backend, name, self._kernel_probe(name, own, described))

    def _probe_torch_paths(self, name):
        """Keras 3's torch GRU/LSTM runs torch._VF (cuDNN) only on CUDA
        tensors outside torch.compile, and otherwise its own loop of
        per-step matrix products (so a compiled step on a GPU has no
        cuDNN); each path, when taken, names itself in the record. False
        where this Keras has not these functions."""
        # the package's attribute "rnn" is a function of that name
        rnn = importlib.import_module("keras.src.backend.torch.rnn")
        paths = {
            "_cudnn_" + name: "torch._VF.{} (cuDNN)".format(name),
            "_fallback_" + name: TORCH_LOOP.format(name.upper()),
        }
        if not all(hasattr(rnn, function) for function in paths):
            return False
        for function, described in paths.items():
            setattr(rnn, function, self._path_probe(name, getattr(rnn, function), described))
        return True

    def _path_probe(self, name, path, described):
        def probe(*args, **kwargs):
            outputs = path(*args, **kwargs)
            self.recurrent_kernels[name] = described
            return outputs

        return probe

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
    has accepted the layer (Keras 3.15's backends): JAX has a cuDNN LSTM
    (jax.experimental.rnn) but no cuDNN GRU, its GRU is one lax.scan; torch
    calls torch._VF, cuDNN's kernels, on CUDA outside torch.compile and its
    own loop otherwise (the adapter records which; the record's
    recurrent_ops shows what ran); TensorFlow's is cuDNN's on a GPU."""
    if framework == "jax" and name == "gru":
        return "Keras' JAX GRU: one lax.scan, input projections precomputed (JAX has no cuDNN GRU)"
    if framework == "jax":
        return "cuDNN's LSTM through jax.experimental.rnn"
    if framework == "torch":
        return "torch._VF.{} on CUDA, Keras' own loop otherwise".format(name)
    where = "GPU: cuDNN" if devices else "CPU"
    return "{}'s own {} ({})".format(framework, name.upper(), where)
