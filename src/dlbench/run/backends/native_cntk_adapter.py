"""CNTK's own API behind the harness, no Keras: the workloads' cntk modules
(dlbench/models/workloads/<model>/in_cntk.py, cntk.layers) applied to an input
variable, cross_entropy_with_softmax as the criterion, CNTK's learners and a
cntk.Trainer stepping through the same batches in the same order as every
other backend. CNTK runs on the CPU here (its GPU build needs CUDA 10 and
cuDNN 7); its CPU threads are set with set_max_num_cputhreads. cntk is
imported in ``setup``. Importable on Python 3.6.
"""

import time

from dlbench.models import initial_weights
from dlbench.models.layers import cntk_layers
from dlbench.models.programs import in_cntk as program
from dlbench.run import manifest
from dlbench.run.backends import native


class Adapter(native.NativeAdapter):
    backend = "native-cntk"

    def setup(self, threads, seed, devices, parallel=None):
        self._start(threads, devices, parallel)
        import cntk
        import numpy

        self.C = cntk
        cntk.device.try_set_default_device(cntk.device.cpu())
        cntk.cntk_py.set_fixed_random_seed(seed)
        cntk.cntk_py.set_max_num_cputhreads(threads)
        numpy.random.seed(seed)
        self.applied.update(
            {
                "device": "cpu",
                "cntk_max_cpu_threads": cntk.cntk_py.get_max_num_cputhreads(),
                "learning_rate_schedule": "learning_parameter_schedule, use_mean_gradient "
                "(the minibatch's mean gradient, as Keras)",
            }
        )
        self.read_manifest = lambda: manifest.host_manifest(
            "CNTK", threads, "CNTK's static graph", probe=manifest.cntk_probe
        )

    def versions(self):
        import numpy

        return {
            "framework": "cntk",
            "framework_version": self.C.__version__,
            "numpy": numpy.__version__,
        }

    def build(self, model_name, data_spec, hyper):
        C = self.C
        words = self.registry.models[model_name]["inputs"][0] == "words150"
        if words:
            features = cntk_layers.words_input(C, data_spec)
        else:
            shape = cntk_layers.channels_first_shape(data_spec)
            features = C.input_variable(shape, "float32", name="features")
        labels = C.input_variable(data_spec["classes"], "float32", name="labels")
        logits = self.registry.builder(model_name, "cntk")(C, data_spec)(features)
        if words:
            self.applied["recurrent_kernels"] = (
                "Keras 3's GRU step (reset_after) in CNTK ops under cntk.layers.Recurrence "
                "(CNTK's own GRU has one bias and the other form)"
            )
        loss, error = program.criteria(C, logits, labels)
        model = {
            "words": words,
            "features": features,
            "labels": labels,
            "logits": logits,
            "probabilities": program.probabilities(C, logits),
            "loss": loss,
            "error": error,
        }
        if "optimizer" in hyper:
            learner, notes = cntk_layers.optimizer(C, logits.parameters, hyper["optimizer"], native)
            if notes:
                self.applied["optimizer_notes"] = notes
            self.applied["own_rules"] = [notes["rule"]] if "rule" in notes else []
            model["trainer"] = program.trainer(C, logits, (loss, error), learner)
        return model

    @staticmethod
    def load_initial_weights(model, layout, weights):
        # CNTK lists a graph's parameters from its output back: reversed,
        # same-shaped weights (two dense biases) pair in Keras' order
        parameters = list(reversed(model["logits"].parameters))
        converted = cntk_layers.keras_weights(layout, weights)
        shapes = [tuple(parameter.shape) for parameter in parameters]
        for parameter, value in zip(
            parameters, initial_weights.assign_by_shape(shapes, converted, "CNTK")
        ):
            parameter.value = value

    @staticmethod
    def parameter_count(model):
        import numpy

        return int(sum(numpy.prod(p.shape) for p in model["logits"].parameters))

    def _batches(self, model, x, y, batch_size):
        """The epoch's batches as CNTK takes them: (features, labels, count)."""
        parts = native.batches(len(x), batch_size)
        labels = [None] * len(parts) if y is None else [y[part].astype("float32") for part in parts]
        inputs = cntk_layers.words(x) if model["words"] else native.channels_first(x)
        features = [inputs[part] for part in parts]
        return [
            (inputs, targets, part.stop - part.start)
            for inputs, targets, part in zip(features, labels, parts)
        ]

    def train_epoch(self, model, x, y, batch_size):
        batches = self._batches(model, x, y, batch_size)  # like fit()'s set-up: not timed
        start = time.perf_counter()
        total_loss, total_error = program.train_epoch(
            model["trainer"],
            model["features"],
            model["labels"],
            batches,
            lambda: self._time_first_step(start),
        )
        seconds = time.perf_counter() - start  # the averages are host values: the work is done
        n = len(y)
        return {"loss": total_loss / n, "accuracy": 1.0 - total_error / n, "seconds": seconds}

    def evaluate(self, model, x, y, batch_size):
        both = self.C.combine([model["loss"], model["error"]])
        total_loss = total_error = 0.0
        for features, labels, _ in self._batches(model, x, y, batch_size):
            found = both.eval({model["features"]: features, model["labels"]: labels})
            total_loss += float(found[model["loss"].output].sum())
            total_error += float(found[model["error"].output].sum())
        return total_loss / len(y), 1.0 - total_error / len(y)

    def predict(self, model, x):
        ((features, _, _),) = self._batches(model, x, None, len(x))
        return program.predict(model["probabilities"], model["features"], features)

    def prepare_check(self, model, hyper):
        """For the equivalence check: CNTK's RMSProp adds an epsilon of its
        own (not settable), so under the check's epsilon the step is Keras
        3's RMSprop written in CNTK's ops (cntk.learners.universal, CNTK's
        documented way to a learner of one's own). What it changed, for the
        check's record."""
        settings = hyper["optimizer"]
        if settings["name"] != "rmsprop":
            return {}
        C = self.C
        learner = C.learners.universal(
            cntk_layers.keras_rmsprop(C, settings, hyper["batch_size"]),
            model["logits"].parameters,
        )
        model["trainer"] = program.trainer(
            C, model["logits"], (model["loss"], model["error"]), learner
        )
        return {"learner": "Keras 3's RMSprop in CNTK ops (cntk.learners.universal)"}

    def training_outputs(self, model, x, draws):
        """The probabilities in training mode, ``draws`` times: CNTK's
        Dropout is active where a forward pass keeps its state for a
        backward pass (keep_for_backward), as Keras 2's CNTK backend
        evaluates in its learning phase; each call draws a fresh mask."""
        import numpy

        ((features, _, _),) = self._batches(model, x, None, len(x))
        probabilities = model["probabilities"]
        output = probabilities.output
        found = []
        for _ in range(draws):
            _, values = probabilities.forward(
                {model["features"]: features}, [output], keep_for_backward={output}
            )
            found.append(numpy.asarray(values[output]))
        return numpy.stack(found)
