"""Keras 2 on Theano: its flags (set before its import), its compiled ops'
cache, its kernels flipped against the shared weights' convolution, and the
gradients it computes its own way (keras2_adapter; what a module here
provides: keras_on). Importable on Python 3.6."""

import os
import sys

from dlbench.models.layers import MAX_POOL_TIES
from dlbench.run import manifest
from dlbench.run.backends import frameworks

THEANO_RELU = "ReLU's gradient at 0 is 0.5 (Theano's relu, (x + |x|) / 2; Keras 3's backends: 0)"


def setup(adapter, threads, seed):
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
    adapter.applied["theano_cache_warm"] = frameworks.cache_is_warm(cache)
    flags = {
        "floatX": "float32",
        "device": "cpu",
        "blas.ldflags": "",
        "openmp": False,
        "base_compiledir": cache,
        "gcc.cxxflags": frameworks.gxx_flags(adapter.requested),
    }
    compiler = frameworks.precompiled_headers_compiler(adapter.requested, cache)
    if compiler:
        flags["cxx"] = compiler
    os.environ["THEANO_FLAGS"] = ",".join(
        "{}={}".format(key, value) for key, value in sorted(flags.items())
    )
    adapter.applied["theano_flags"] = os.environ["THEANO_FLAGS"]


def versions(theano):
    return {}


def read_manifest(adapter, threads):
    # Theano computes in its C ops on the calling thread, with numpy's BLAS:
    # the manifest's numpy probe sees what they do.
    return manifest.host_manifest(
        adapter.framework,
        threads,
        "theano graph (Keras 2)",
        probe=None,
        deterministic=None,
        onednn=False,
    )


def initial_weights(layout, weights):
    """Keras 2's Theano backend computes a true convolution (its kernels
    flipped against every other backend's cross-correlation, what
    keras.utils.conv_utils.convert_kernel converts): measured, the
    shared weights unflipped gave the cnn outputs 0.008 from Keras 3's,
    flipped 1.5e-8. The other Keras 2 backends take them as they are."""
    return [
        values[::-1, ::-1].copy()
        if entry["class"] == "Conv2D" and entry["variable"] == "kernel"
        else values
        for entry, values in zip(layout["weights"], weights)
    ]


def own_rules(adapter, model, optimizer_name):
    """Two gradients, measured (tests/e2e/test_equivalence_mistakes): a
    maximum's ties and ReLU's at 0."""
    rules = []
    layers = list(adapter.layers(model))
    if any(type(layer).__name__ == "MaxPooling2D" for layer in layers):
        rules.append(MAX_POOL_TIES)
    activations = {
        getattr(getattr(layer, "activation", None), "__name__", None) for layer in layers
    }
    if "relu" in activations:
        rules.append(THEANO_RELU)
    return rules
