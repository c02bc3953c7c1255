"""Plain PyTorch behind the harness: the models of models/torch_models.py, a
hand-written training loop (the one PyTorch's tutorials write), the same
batches in the same order as every other backend. torch is imported in
``setup``, after the harness pinned the process. Importable on Python 3.6.
"""

import time

from dlbench.models import torch_models


class Adapter(object):
    def __init__(self, framework, settings):
        self.requested = dict(settings)
        self.applied = {}
        self.torch = None
        self.device = None

    def setup(self, threads, seed, devices, parallel=None):
        if devices:
            raise NotImplementedError(
                "devices={}: native-torch runs on the CPU here".format(devices)
            )
        import numpy
        import torch

        self.torch = torch
        torch.set_num_threads(threads)
        torch.set_num_interop_threads(1)
        torch.set_flush_denormal(True)  # as in the Keras adapter: denormals slow CPU kernels
        torch.manual_seed(seed)
        numpy.random.seed(seed)
        self.device = torch.device("cpu")
        self.applied.update(
            {
                "intra_op_threads": threads,
                "inter_op_threads": 1,
                "flush_denormal": True,
                "device": str(self.device),
            }
        )

    def versions(self):
        import numpy

        torch = self.torch
        return {
            "framework": "torch",
            "framework_version": torch.__version__,
            "numpy": numpy.__version__,
            "cuda": torch.version.cuda,
        }

    def settings(self):
        found = dict(self.applied)
        found["inference_call"] = "model(x) under torch.inference_mode"
        return found

    def build(self, model_name, data_spec, hyper):
        torch = self.torch
        net = torch_models.BUILDERS[model_name](torch, data_spec).to(self.device)
        # torch.compile is PyTorch's documented way to compile the step; on the
        # CPU its first epoch pays a long C++ build, so it follows jit_compile.
        compiled = self.requested.get("jit_compile") is True
        self.applied["torch_compile"] = compiled
        model = {"net": net, "forward": torch.compile(net) if compiled else net}
        if "optimizer" in hyper:
            model["optimizer"] = torch_models.optimizer(torch, net.parameters(), hyper["optimizer"])
        return model

    @staticmethod
    def parameter_count(model):
        return sum(p.numel() for p in model["net"].parameters())

    def _tensors(self, x, y=None):
        torch = self.torch
        inputs = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous().to(self.device)
        if y is None:
            return inputs
        return inputs, torch.from_numpy(y.argmax(axis=1)).to(self.device)

    def _batches(self, inputs, labels, batch_size):
        for start in range(0, len(labels), batch_size):
            yield inputs[start : start + batch_size], labels[start : start + batch_size]

    def train_epoch(self, model, x, y, batch_size):
        torch = self.torch
        inputs, labels = self._tensors(x, y)  # like fit()'s set-up: outside the epoch's time
        start = time.perf_counter()
        net, forward, optimizer = model["net"], model["forward"], model["optimizer"]
        net.train()
        total_loss = torch.zeros((), device=self.device)
        correct = torch.zeros((), dtype=torch.long, device=self.device)
        for batch_x, batch_y in self._batches(inputs, labels, batch_size):
            optimizer.zero_grad(set_to_none=True)
            logits = forward(batch_x)
            loss = torch.nn.functional.cross_entropy(logits, batch_y)
            loss.backward()
            optimizer.step()
            total_loss += loss.detach() * len(batch_y)
            correct += (logits.detach().argmax(dim=1) == batch_y).sum()
        n = len(labels)
        result = {"loss": float(total_loss) / n, "accuracy": float(correct) / n}
        result["seconds"] = time.perf_counter() - start  # float() above waited for the work
        return result

    def evaluate(self, model, x, y, batch_size):
        torch = self.torch
        inputs, labels = self._tensors(x, y)
        net = model["net"]
        net.eval()
        total_loss, correct = 0.0, 0
        with torch.inference_mode():
            for batch_x, batch_y in self._batches(inputs, labels, batch_size):
                logits = net(batch_x)
                total_loss += float(
                    torch.nn.functional.cross_entropy(logits, batch_y, reduction="sum")
                )
                correct += int((logits.argmax(dim=1) == batch_y).sum())
        return total_loss / len(labels), correct / len(labels)

    def predict(self, model, x):
        torch = self.torch
        net = model["net"]
        net.eval()
        with torch.inference_mode():
            return torch.softmax(net(self._tensors(x)), dim=1)

    def synchronize(self):
        pass  # CPU only: every op has finished when it returns

    def peak_device_memory_mb(self):
        return None

    @staticmethod
    def replica_divergence(model):
        return None
