"""PyTensor behind the harness: the workloads' pytensor modules
(dlbench/models/workloads/<model>/in_pytensor.py) as a symbolic graph, gradients by
pytensor.grad, Keras' update rules written out as the function's updates,
compiled (C code built by g++ at run time, linked to OpenBLAS) into one
function for the training step and one for prediction; the same batches in
the same order as every other backend. pytensor is imported in ``setup``,
after its flags and the BLAS thread variables are set. Importable on Python
3.6.
"""

import functools
import glob
import os
import sys
import sysconfig
import time

from dlbench.host import runtime
from dlbench.models import initial_weights
from dlbench.models.layers import pytensor_layers
from dlbench.models.programs import in_pytensor as program
from dlbench.run import manifest
from dlbench.run.backends import frameworks, native


class Adapter(native.NativeAdapter):
    backend = "native-pytensor"

    def setup(self, threads, seed, devices, parallel=None):
        self._start(threads, devices, parallel)
        # OpenBLAS sizes its pool from OPENBLAS/OMP_NUM_THREADS when it
        # loads: unpinned, it oversubscribes the CPUs.
        os.environ.update(runtime.thread_environment(threads))
        # Compiled ops are cached per environment (rebuilt with it); the record
        # says whether this run found the cache warm (a shorter first epoch).
        cache = os.path.join(sys.prefix, "pytensor-cache")
        self.applied["compile_cache_warm"] = frameworks.cache_is_warm(cache)
        flags = "floatX=float32,gcc__cxxflags={},base_compiledir={}".format(
            frameworks.gxx_flags(self.requested), cache
        )
        compiler = frameworks.precompiled_headers_compiler(self.requested, cache)
        flags += ",cxx=" + compiler if compiler else ""
        blas = _openblas_flags(cache)
        os.environ["PYTENSOR_FLAGS"] = flags + (",blas__ldflags=" + blas if blas else "")
        import pytensor

        self.pytensor = pytensor
        self.seed = seed
        config = pytensor.config
        self.applied.update(
            {
                "blas_threads": int(os.environ["OPENBLAS_NUM_THREADS"]),
                "omp_threads": int(os.environ["OMP_NUM_THREADS"]),
                "pytensor_flags": os.environ["PYTENSOR_FLAGS"],
                "mode": str(config.mode),
                "linker": config.linker,
                "floatX": config.floatX,
                "openmp": config.openmp,
                "blas_ldflags": config.blas__ldflags,
                "cxx": config.cxx,
                "compiled_functions": "pytensor.function: the train step in the build, predict "
                "and evaluate when first called",
                "device": "cpu",
            }
        )
        # PyTensor's C ops run on the calling thread with OpenBLAS: numpy's probe.
        self.read_manifest = lambda: manifest.host_manifest(
            "PyTensor", threads, "pytensor.function compiled to C", onednn=False
        )

    def versions(self):
        import numpy

        return {
            "framework": "pytensor",
            "framework_version": self.pytensor.__version__,
            "numpy": numpy.__version__,
        }

    def build(self, model_name, data_spec, hyper):
        pytensor = self.pytensor
        pt = pytensor.tensor
        net = pytensor_layers.Layers(pytensor, self.seed)
        layers = self.registry.builder(model_name, "pytensor")(net, data_spec)
        model = {"params": net.params, "forward": functools.partial(program.forward, layers)}
        # Compiled when first called, as Keras compiles its predict and test
        # steps: a training run never predicts and an inference run never
        # evaluates, and neither compile belongs to the time to the first step.
        later = functools.partial(_compiled_when_called, pytensor.function)
        model["predict"] = program.predict_function(pytensor, layers, later)
        x, labels = pt.tensor4("x", dtype="float32"), pt.ivector("labels")
        logits = program.forward(layers, x, False)
        model["evaluate"] = later([x, labels], program.loss_and_hits(pt, logits, labels))
        # the layers note where they compute other than Keras 3 as the graph is built
        self.applied["own_rules"] = list(net.own_rules)
        if "optimizer" in hyper:
            settings, params = hyper["optimizer"], net.params
            model["train"] = program.train_function(
                pytensor,
                layers,
                params,
                lambda grads: pytensor_layers.updates(pytensor, params, grads, settings, native),
            )
        return model

    @staticmethod
    def load_initial_weights(model, layout, weights):
        params = model["params"]
        converted = initial_weights.channels_first(layout, weights, dense_units_first=False)
        shapes = [param.get_value(borrow=True).shape for param in params]
        for param, value in zip(
            params, initial_weights.assign_by_shape(shapes, converted, "PyTensor")
        ):
            param.set_value(value)

    @staticmethod
    def parameter_count(model):
        return sum(param.get_value(borrow=True).size for param in model["params"])

    def train_epoch(self, model, x, y, batch_size):
        # like fit()'s set-up: outside the epoch's time
        inputs, labels = native.channels_first(x, y)
        start = time.perf_counter()
        total_loss, correct = program.train_epoch(
            model["train"],
            ((inputs[part], labels[part]) for part in native.batches(len(labels), batch_size)),
            lambda: self._time_first_step(start),
        )
        n = len(labels)
        result = {"loss": total_loss / n, "accuracy": correct / n}
        result["seconds"] = time.perf_counter() - start
        return result

    def evaluate(self, model, x, y, batch_size):
        inputs, labels = native.channels_first(x, y)
        total_loss, correct = 0.0, 0
        for part in native.batches(len(labels), batch_size):
            loss, hits = model["evaluate"](inputs[part], labels[part])
            total_loss += float(loss) * len(labels[part])
            correct += int(hits)
        return total_loss / len(labels), correct / len(labels)

    def predict(self, model, x):
        return model["predict"](native.channels_first(x))

    def training_outputs(self, model, x, draws):
        """The softmaxed outputs in training mode, ``draws`` times: one
        function of the forward pass with its dropout, whose random stream
        advances at every call (its default updates): the equivalence
        check's dropout draws."""
        import numpy

        pt = self.pytensor.tensor
        images = pt.tensor4("x", dtype="float32")
        outputs = pt.special.softmax(model["forward"](images, True), axis=1)
        draw = self.pytensor.function([images], outputs)
        inputs = native.channels_first(x)
        return numpy.stack([draw(inputs) for _ in range(draws)])


def _compiled_when_called(function, inputs, outputs):
    """``function(inputs, outputs)``, compiled on its first call."""
    compiled = []

    def call(*args):
        if not compiled:
            compiled.append(function(inputs, outputs))
        return compiled[0](*args)

    return call


def _openblas_flags(cache):
    """Link PyTensor's C ops (Gemm, the convolutions' CorrMM) to the
    OpenBLAS that scipy's wheel bundles (plain BLAS symbols; numpy's are
    renamed): without a BLAS to link, PyTensor cannot lower conv2d to its
    CorrMM op.
    Linked through a libopenblas.so link in the compile cache; the compiled
    ops find it and its libgfortran in scipy.libs through their RPATH (not
    RUNPATH, which would not reach the library's own dependencies)."""
    libs = os.path.join(sysconfig.get_paths()["purelib"], "scipy.libs")
    found = glob.glob(os.path.join(libs, "libopenblas*.so"))
    if not found:
        return ""  # left to PyTensor's own search (the record shows its result)
    links = os.path.join(cache, "blas-links")
    os.makedirs(links, exist_ok=True)
    try:
        os.symlink(found[0], os.path.join(links, "libopenblas.so"))
    except FileExistsError:
        pass  # made by an earlier run
    # no commas: PYTENSOR_FLAGS splits on them; each -L also becomes an rpath
    return "-Xlinker --disable-new-dtags -L{} -L{} -lopenblas".format(links, libs)
