"""A real, tiny training backend in plain numpy (softmax regression with
SGD), so the harness contract can be tested in milliseconds without a
framework. It follows the adapter interface of dlbench.run.backends."""

import time

import numpy as np

from dlbench.run import run_data
from dlbench.run.backends import base


class SlowRows(object):
    """An array whose rows arrive slowly (``delay`` seconds a batch), as from
    a slow disk: the adapter's setting ``feed_delay`` feeds it through
    run_data, the harness' data module, so that its python stacks show feeding data."""

    def __init__(self, array, delay):
        self.array, self.delay = array, delay

    def __getitem__(self, rows):
        time.sleep(self.delay)
        return self.array[rows]


class Adapter(base.Adapter):
    closed = 0  # how many adapters the harness closed

    def __init__(self, framework, settings):
        super(Adapter, self).__init__(framework, settings)
        self.settings_ = dict(settings)

    def setup(self, threads, seed, devices, parallel=None):
        self.rng = np.random.RandomState(seed)

    def versions(self):
        return {"framework": "numpy", "framework_version": np.__version__}

    def applied_settings(self):
        return dict(self.settings_)

    def build(self, model_name, data_spec, hyper):
        shapes = data_spec["input_shape"]
        shapes = [shapes[name] for name in sorted(shapes)] if isinstance(shapes, dict) else [shapes]
        features = sum(int(np.prod(shape)) for shape in shapes)
        classes = data_spec["classes"]
        limit = np.sqrt(6.0 / (features + classes))
        return {
            "w": self.rng.uniform(-limit, limit, (features, classes)),
            "b": np.zeros(classes),
            "lr": hyper.get("optimizer", {}).get("learning_rate", 0.1),
        }

    @staticmethod
    def load_initial_weights(model, layout, weights):
        """A Dense layer's kernel and bias, as the shared weights hold them."""
        kernel, bias = weights
        if kernel.shape != model["w"].shape:
            raise ValueError("kernel {} for {}".format(kernel.shape, model["w"].shape))
        model["w"], model["b"] = kernel.astype("float64"), bias.astype("float64")

    @staticmethod
    def parameter_count(model):
        return model["w"].size + model["b"].size

    @staticmethod
    def _features(x):
        """Several named inputs side by side, in name order."""
        parts = [x[name] for name in sorted(x)] if isinstance(x, dict) else [x]
        return np.hstack([part.reshape(len(part), -1) for part in parts]).astype("float64")

    def _forward(self, model, x):
        logits = self._features(x) @ model["w"] + model["b"]
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)

    def train_epoch(self, model, x, y, batch_size):
        losses, correct = [], 0
        features = self._features(x)
        delay = self.settings_.get("feed_delay")
        source = SlowRows(features, delay) if delay else features
        began = time.perf_counter()
        for start in range(0, len(y), batch_size):
            rows = slice(start, start + batch_size)
            xb, yb = run_data.take(source, rows), y[rows]
            p = self._forward(model, xb)
            losses.append(-np.mean(np.sum(yb * np.log(p + 1e-12), axis=1)))
            correct += int(np.sum(p.argmax(1) == yb.argmax(1)))
            grad = (p - yb) / len(xb)
            model["w"] -= model["lr"] * xb.reshape(len(xb), -1).T @ grad
            model["b"] -= model["lr"] * grad.sum(axis=0)
            if self.first_step_seconds is None:
                self.first_step_seconds = time.perf_counter() - began
        return {"loss": float(np.mean(losses)), "accuracy": correct / len(y)}

    def evaluate(self, model, x, y, batch_size):
        p = self._forward(model, x)
        loss = -np.mean(np.sum(y * np.log(p + 1e-12), axis=1))
        return float(loss), float(np.mean(p.argmax(1) == y.argmax(1)))

    def predict(self, model, x):
        return self._forward(model, x)

    # the rate of the inverted dropout on the inputs in training mode
    dropout_rate = 0.2

    def training_outputs(self, model, x, draws):
        """The outputs with inverted dropout on the inputs, a fresh mask each
        draw (none where the process runs without dropout)."""
        from dlbench.models.layers import dropout_on

        features, found = self._features(x), []
        rate = self.dropout_rate if dropout_on() else 0.0
        for _ in range(draws):
            kept = self.rng.uniform(size=features.shape) >= rate
            found.append(self._forward(model, features * kept / (1.0 - rate)))
        return np.stack(found)

    def synchronize(self):
        pass

    def peak_device_memory_mb(self):
        return None

    def close(self):
        Adapter.closed += 1

    @staticmethod
    def replica_divergence(model):
        return None  # one replica
