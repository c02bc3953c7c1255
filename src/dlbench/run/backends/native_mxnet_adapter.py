"""MXNet's own Gluon API behind the harness: the workloads' mxnet modules
(dlbench/models/workloads/<model>/in_mxnet.py) hybridized into a static graph
(static_alloc and static_shape, Gluon's documented fast path), a
hand-written loop under autograd.record with gluon.Trainer, the same batches
in the same order as every other backend. mxnet is imported in ``setup``,
after its thread variables are set. Importable on Python 3.6.

mixed_bfloat16 is MXNet's AMP (``mxnet.contrib.amp.init``, target
bfloat16), its documented mixed precision on the CPU: the operators on AMP's
bfloat16 list (fully connected, convolution, ...) compute in bfloat16, those
on its float32 list (softmax, losses, reductions) in float32; parameters stay
float32. No loss scaling: bfloat16 has float32's range. MXNet's CPU
operators have no float16.
"""

import functools
import os
import time

from dlbench import catalog
from dlbench.host import runtime
from dlbench.models import initial_weights
from dlbench.models.layers import dropout_on, mxnet_layers
from dlbench.models.programs import in_mxnet as program
from dlbench.run import manifest
from dlbench.run.backends import native


class Adapter(native.NativeAdapter):
    backend = "native-mxnet"

    def setup(self, threads, seed, devices, parallel=None):
        self._start(threads, devices, parallel)
        # MXNet sizes its operator (OpenMP) pool from OMP_NUM_THREADS on
        # import; one engine worker thread runs the operators in turn.
        os.environ.update(runtime.thread_environment(threads))
        os.environ.setdefault("MXNET_CPU_WORKER_NTHREADS", "1")
        manifest.prepare(self.requested.get("precision", catalog.FLOAT32))
        import mxnet
        import numpy

        self.mx = mxnet
        self.bfloat16 = None  # AMP's bfloat16 dtype under mixed_bfloat16
        if self.requested.get("precision", catalog.FLOAT32) == "mixed_bfloat16":
            from mxnet.contrib.amp import amp

            amp.init(target_dtype="bfloat16")  # before any block is built
            self.bfloat16 = amp.bfloat16
            self._precision_applied("mixed_bfloat16")
        mxnet.random.seed(seed)
        numpy.random.seed(seed)
        self.context = mxnet.cpu()
        self.applied.update(
            {
                "omp_threads": int(os.environ["OMP_NUM_THREADS"]),
                "mxnet_cpu_worker_threads": int(os.environ["MXNET_CPU_WORKER_NTHREADS"]),
                "mxnet_engine": os.environ.get("MXNET_ENGINE_TYPE", "ThreadedEnginePerDevice"),
                "mkldnn": mxnet.runtime.Features().is_enabled("MKLDNN"),
                # Gluon's compiler: the compile dimension's eager turns it off
                "hybridize": (
                    {"static_alloc": True, "static_shape": True}
                    if self.requested.get("hybridize", True)
                    else False
                ),
                "device": str(self.context),
            }
        )
        self.read_manifest = lambda: manifest.host_manifest(
            "MXNet",
            int(os.environ["OMP_NUM_THREADS"]),
            "Gluon hybridize" if self.applied["hybridize"] else "Gluon imperative",
            probe=manifest.mxnet_probe,
            deterministic=os.environ.get("MXNET_ENFORCE_DETERMINISM", "0") == "1",
        )

    def versions(self):
        import numpy

        features = self.mx.runtime.Features()
        return {
            "framework": "mxnet",
            "framework_version": self.mx.__version__,
            "numpy": numpy.__version__,
            "cuda": features.is_enabled("CUDA"),
            "cudnn": features.is_enabled("CUDNN"),
        }

    def build(self, model_name, data_spec, hyper):
        mx = self.mx
        net = self.registry.builder(model_name, "mxnet")(mx, data_spec)
        if not dropout_on():  # the equivalence check; before the graph is cached
            net.apply(
                lambda block: (
                    setattr(block, "_rate", 0.0) if isinstance(block, mx.gluon.nn.Dropout) else None
                )
            )
        if self.applied["hybridize"]:
            net.hybridize(**self.applied["hybridize"])
        model = {"net": net, "step": 0}
        if "optimizer" in hyper:
            settings = hyper["optimizer"]
            optimizer = mxnet_layers.optimizer(mx, settings, native)
            model["settings"] = settings
            model["trainer"] = mx.gluon.Trainer(net.collect_params(), optimizer)
            model["loss"] = program.loss_function(mx)
        return model

    def load_initial_weights(self, model, layout, weights):
        parameters = list(model["net"].collect_params().values())
        values = initial_weights.assign_by_shape(
            [p.shape for p in parameters],
            initial_weights.channels_first(layout, weights),
            "MXNet",
        )
        for parameter, value in zip(parameters, values):
            parameter.set_data(self.mx.nd.array(value, ctx=self.context))

    @staticmethod
    def parameter_count(model):
        return sum(p.data().size for p in model["net"].collect_params().values())

    def _arrays(self, x, y=None):
        nd = self.mx.nd
        inputs = nd.array(x.transpose(0, 3, 1, 2), ctx=self.context)
        if y is None:
            return inputs
        return inputs, nd.array(y.argmax(axis=1), ctx=self.context)

    def train_epoch(self, model, x, y, batch_size):
        mx = self.mx
        inputs, labels = self._arrays(x, y)  # like fit()'s set-up: outside the epoch's time
        mx.nd.waitall()
        start = time.perf_counter()
        net, trainer = model["net"], model["trainer"]
        decay = model["settings"].get("decay")

        def next_rate():  # Keras 2's decay: the rate of the step to come
            if decay:
                trainer.set_learning_rate(native.learning_rate(model["settings"], model["step"]))

        def after_step():
            model["step"] += 1
            next_rate()
            self._time_first_step(start, mx.nd.waitall)

        next_rate()
        total_loss, correct = program.train_epoch(
            mx,
            lambda batch: self._outputs(net, batch),
            trainer,
            model["loss"],
            ((inputs[part], labels[part]) for part in native.batches(len(y), batch_size)),
            after_step,
        )
        n = len(y)
        result = {"loss": total_loss.asscalar() / n, "accuracy": correct.asscalar() / n}
        result["seconds"] = time.perf_counter() - start  # asscalar() waited for the work
        return result

    def evaluate(self, model, x, y, batch_size):
        mx = self.mx
        inputs, labels = self._arrays(x, y)
        loss_of = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        total_loss, correct = mx.nd.zeros(1), mx.nd.zeros(1)
        for part in native.batches(len(y), batch_size):
            logits = self._outputs(model["net"], inputs[part])
            total_loss += loss_of(logits, labels[part]).sum()
            correct += (logits.argmax(axis=1) == labels[part]).sum()
        return total_loss.asscalar() / len(y), correct.asscalar() / len(y)

    def _outputs(self, net, x):
        """The network's outputs, in float32 (under AMP, the last layer's
        come in bfloat16; losses and softmax take float32 as AMP gives them)."""
        outputs = net(x)
        if self.bfloat16 is not None and outputs.dtype == self.bfloat16:
            self.computed_dtype = "bfloat16"
            outputs = outputs.astype("float32")
        elif self.bfloat16 is not None:
            self.computed_dtype = str(outputs.dtype.__name__)
        return outputs

    def predict(self, model, x):
        forward = functools.partial(self._outputs, model["net"])
        return program.predict(self.mx, forward, self._arrays(x)).asnumpy()

    def training_outputs(self, model, x, draws):
        """The softmaxed outputs in training mode (autograd.train_mode: Gluon's
        Dropout draws a fresh mask each call), ``draws`` times: the
        equivalence check's dropout draws."""
        import numpy

        mx, inputs = self.mx, self._arrays(x)
        with mx.autograd.train_mode():
            found = [
                mx.nd.softmax(self._outputs(model["net"], inputs)).asnumpy() for _ in range(draws)
            ]
        return numpy.stack(found)

    def synchronize(self):
        self.mx.nd.waitall()
