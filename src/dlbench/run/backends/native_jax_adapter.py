"""Plain JAX behind the harness: the workloads' jax modules
(dlbench/models/workloads/<model>/in_jax.py) (parameters as pytrees, pure forward
functions), optax optimizers, and a training step compiled with jax.jit
(JAX's documented way: value_and_grad, the optimizer update and the epoch's
running sums in one XLA computation). The same batches in the same order as
every other backend. On devices >= 2 one process drives every device: the
batch is sharded over a device mesh (NamedSharding), parameters and
optimizer state are replicated, and XLA inserts the gradient all-reduce. jax
is imported in ``setup``, after the harness pinned the process and the XLA
flags are set. Importable on Python 3.6.
"""

import functools
import time

from dlbench import catalog
from dlbench.models.layers import LOSS_SCALING, jax_layers
from dlbench.models.programs import in_jax as program
from dlbench.run import compiles, launch, manifest
from dlbench.run.backends import frameworks, native


def _shapes_of(jax, tree):
    """``tree`` with a jax.ShapeDtypeStruct for each array, its dicts in the
    builder's order: the shared weights are matched to layers in that order,
    and JAX's own tree functions (eval_shape's result too) sort dict keys."""
    if isinstance(tree, dict):
        return {name: _shapes_of(jax, value) for name, value in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_shapes_of(jax, value) for value in tree)
    return jax.ShapeDtypeStruct(tree.shape, tree.dtype)


class Adapter(native.NativeAdapter):
    backend = "native-jax"

    def __init__(self, framework, settings):
        native.NativeAdapter.__init__(self, framework, settings)
        self.jax = None
        self.key = None
        self.replicated = None  # NamedSharding of parameters on devices >= 1
        self.batch_sharding = None
        self.step_sync = False
        self.emulated = False

    def setup(self, threads, seed, devices, parallel=None):
        self.emulated = self._start(threads, devices, parallel, distributes=True)
        precision = self.requested.get("precision", catalog.FLOAT32)
        manifest.prepare(precision)
        manifest.prepare_jax(self.requested)
        self.applied.update(frameworks.pin_jax(threads, launch.emulated_devices(self.parallel)))
        self.applied.update(
            frameworks.jax_compilation_cache(self.requested.get("compilation_cache", False))
        )
        import jax

        self.jax = jax
        manifest.set_jax(jax, precision)
        on_gpu = bool(devices) and not self.emulated
        self.read_manifest = lambda: manifest.jax_manifest(jax, on_gpu, "jax.jit (XLA)")
        self.compile_counter = compiles.jax_counter()
        self.key = jax.random.PRNGKey(seed)
        # Always jitted, JAX's documented way: the jit_compile setting is not consulted.
        self.applied["jit"] = "always: jax.jit training step and predict"
        if launch.distributes(self.parallel):
            self._distribute(devices)
        else:  # the CPU, or one device: JAX's default device
            self.applied["device"] = str(jax.devices()[0])
            if devices:
                if not self.emulated:  # a GPU, never the CPU unseen
                    frameworks.jax_devices(jax, self.framework, 1, False, self.backend)
                self.applied["data_parallel"] = self._describe_parallel(devices)

    def _distribute(self, devices):
        import numpy
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        found = frameworks.jax_devices(
            self.jax, self.framework, devices, self.emulated, self.backend
        )
        mesh = Mesh(numpy.array(found), ("batch",))
        self.replicated = NamedSharding(mesh, PartitionSpec())
        self.batch_sharding = NamedSharding(mesh, PartitionSpec("batch"))
        # Emulated CPU devices: XLA's CPU all-reduce gives up when one device
        # runs ahead ("only 1 of them arrived on time"); waiting for every
        # step's result keeps them together, as the Keras adapter does.
        self.step_sync = self.emulated
        extra = {"step_sync": "every step's result waited for (emulated XLA CPU devices)"}
        extra = extra if self.step_sync else {}
        self.applied["device"] = [str(device) for device in found]
        self.applied["data_parallel"] = self._describe_parallel(devices, **extra)

    def versions(self):
        import jaxlib
        import numpy
        import optax

        return {
            "framework": "jax",
            "framework_version": self.jax.__version__,
            "jaxlib": jaxlib.__version__,
            "optax": optax.__version__,
            "jax_platform": self.jax.default_backend(),
            "numpy": numpy.__version__,
        }

    def build(self, model_name, data_spec, hyper):
        jax = self.jax
        init_key, dropout_key = jax.random.split(self.key)
        builder = self.registry.builder(model_name, "jax")
        model = {"dropout_key": dropout_key, "step": 0}
        if self.weights_follow:
            # Shared weights replace the draw, so only its shapes are made
            # (jax.eval_shape, as Orbax restores a checkpoint): each shape's
            # random draw is an XLA compilation of its own (ResNet-50's 13 s
            # of a Zen 3 core).
            made = {}

            def shapes(key):
                params, made["forward"] = builder(jax, data_spec, key)
                made["params"] = _shapes_of(jax, params)
                return params

            jax.eval_shape(shapes, init_key)
            params, forward = made["params"], made["forward"]
            model["draw"] = lambda: builder(jax, data_spec, init_key)[0]  # if the load fails
            self.applied["initial_parameters"] = "shapes only (jax.eval_shape), then loaded"
        else:
            params, forward = builder(jax, data_spec, init_key)
            if self.replicated is not None:
                params = jax.device_put(params, self.replicated)
        precision = self.requested.get("precision", catalog.FLOAT32)
        if catalog.mixed(precision):
            forward = self._in_precision(forward, precision)
        model.update(params=params, forward=forward)
        output = (lambda y: y) if self.registry.ends_in_features(model_name) else jax.nn.softmax
        model["predict"] = program.predict(jax, forward, output)
        model["output"] = output
        import optax

        model["evaluate"] = jax.jit(functools.partial(program.sums, optax, forward))
        if "optimizer" in hyper:
            optimizer = jax_layers.optimizer(optax, native, hyper["optimizer"])
            loss_scale = None
            if precision == "mixed_float16":  # float16 gradients underflow unscaled
                optimizer = jax_layers.loss_scaled(jax, optimizer)
                loss_scale = optimizer.scale
                self.applied["precision"]["loss_scaling"] = LOSS_SCALING
            model["optimizer"] = optimizer
            # made with the parameters (load_initial_weights makes it from the loaded ones)
            model["optimizer_state"] = None if self.weights_follow else optimizer.init(params)
            placement = {} if self.replicated is None else {"out_shardings": self.replicated}
            model["train_step"] = program.train_step(
                jax, optax, forward, optimizer, loss_scale, **placement
            )
            name = hyper["optimizer"]["name"]
            self.applied["optimizer"] = jax_layers.OPTIMIZER_NOTES[name]
            own = name in jax_layers.OWN_RULES
            self.applied["own_rules"] = [jax_layers.OPTIMIZER_NOTES[name]] if own else []
        return model

    def _in_precision(self, forward, precision):
        """Mixed precision as JAX's libraries do it (jmp; Flax's dtype and
        param_dtype): float32 parameters cast to the compute dtype for the
        forward pass (their gradients come back float32 through the cast),
        floating inputs too, outputs back to float32 for the loss."""
        jax = self.jax
        import jax.numpy as jnp

        dtype = getattr(jnp, precision.replace("mixed_", ""))

        def cast(tree):
            return jax.tree_util.tree_map(
                lambda a: a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree
            )

        def forward_in_precision(params, x, key=None):
            outputs = forward(cast(params), cast(x), key)
            self.computed_dtype = str(outputs.dtype)  # seen while tracing
            return outputs.astype(jnp.float32)

        scheme = "float32 parameters cast to {} in the forward pass".format(dtype.__name__)
        self._precision_applied(precision, scheme)
        return forward_in_precision

    def applied_settings(self):
        found = super(Adapter, self).applied_settings()
        found["inference_call"] = "jax.jit(softmax(forward(params, x))) (features: no softmax)"
        return found

    def load_initial_weights(self, model, layout, weights):
        try:
            params = jax_layers.load_keras_weights(self.jax, model["params"], layout, weights)
        except Exception:  # the caller goes on from the model's own draw
            if self.weights_follow:
                self._set_params(model, model["draw"]())
            raise
        self._set_params(model, params)

    def _set_params(self, model, params):
        if self.replicated is not None:
            params = self.jax.device_put(params, self.replicated)
        model["params"] = params
        if "optimizer" in model:  # its state follows the parameters it was made from
            model["optimizer_state"] = model["optimizer"].init(params)

    def parameter_count(self, model):
        return sum(int(leaf.size) for leaf in self.jax.tree_util.tree_leaves(model["params"]))

    def _device_batches(self, x, y, batch_size):
        """The epoch's batches on the device(s), sharded over the mesh."""
        jax = self.jax
        return [
            jax.device_put((_rows(x, s), y[s]), self.batch_sharding)
            for s in native.batches(len(y), batch_size)
        ]

    def train_epoch(self, model, x, y, batch_size):
        import numpy

        jax = self.jax
        batches = self._device_batches(x, y, batch_size)  # outside the epoch's time
        start = time.perf_counter()
        totals = jax.device_put((numpy.float32(0), numpy.int32(0)), self.replicated)

        def after_step(totals):
            if self.step_sync:
                jax.block_until_ready(totals)
            self._time_first_step(start, functools.partial(jax.block_until_ready, totals))

        params, state, totals = program.train_epoch(
            model["train_step"],
            model["params"],
            model["optimizer_state"],
            totals,
            batches,
            model["dropout_key"],
            model["step"],
            after_step,
        )
        loss, correct = float(totals[0]), int(totals[1])  # waits for the device work
        seconds = time.perf_counter() - start
        model.update(params=params, optimizer_state=state, step=model["step"] + len(batches))
        return {"loss": loss / len(y), "accuracy": correct / len(y), "seconds": seconds}

    def evaluate(self, model, x, y, batch_size):
        total_loss, correct = 0.0, 0
        for s in native.batches(len(y), batch_size):
            loss, hits = model["evaluate"](model["params"], _rows(x, s), y[s])
            total_loss, correct = total_loss + float(loss), correct + int(hits)
        return total_loss / len(y), correct / len(y)

    def predict(self, model, x):
        import numpy

        return numpy.asarray(model["predict"](model["params"], x))

    def training_outputs(self, model, x, draws):
        """The outputs with dropout (a key given to the forward pass), one
        key per draw split from the model's dropout key, ``draws`` times:
        the equivalence check's dropout draws."""
        import numpy

        jax = self.jax
        forward, output = model["forward"], model["output"]
        draw = jax.jit(lambda params, x, key: output(forward(params, x, key)))
        keys = jax.random.split(jax.random.fold_in(model["dropout_key"], draws), draws)
        return numpy.stack([numpy.asarray(draw(model["params"], x, key)) for key in keys])

    def replica_divergence(self, model):
        """The largest difference between the copies of every replicated
        parameter on the mesh's devices (None on one device)."""
        if self.replicated is None:
            return None
        return max(
            frameworks.largest_difference([shard.data for shard in leaf.addressable_shards])
            for leaf in self.jax.tree_util.tree_leaves(model["params"])
        )

    def peak_device_memory_mb(self):
        if not self.parallel["devices"] or self.emulated:
            return None
        return frameworks.peak_memory_jax()


def _rows(x, rows):
    """Rows of the model input: one array or a dict of named arrays."""
    if isinstance(x, dict):
        return {name: array[rows] for name, array in x.items()}
    return x[rows]
