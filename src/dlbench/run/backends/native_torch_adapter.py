"""Plain PyTorch behind the harness: the workloads' torch modules
(dlbench/models/workloads/<model>/in_torch.py), a hand-written training loop (the
one PyTorch's tutorials write), the same batches in the same order as every
other backend. torch is imported in ``setup``, after the harness pinned the
process. On devices >= 2 each process (started by torchrun, see
dlbench.run.launch) trains its share of every global batch through
DistributedDataParallel, as keras-torch does. Importable on Python 3.6.
"""

import contextlib
import time

from dlbench import catalog
from dlbench.models.layers import dropout_on, torch_layers
from dlbench.models.programs import in_torch as program
from dlbench.run import launch, manifest
from dlbench.run.backends import frameworks, native

# Keras' optimizer settings -> torch.optim arguments (None: handled below).
# Same update rules; where epsilon goes differs for RMSprop (Keras adds it
# under the square root, torch after it) and Adam (Keras: Kingma and Ba's
# "epsilon hat"; torch: epsilon beside the bias-corrected sqrt(v)).
OPTIMIZERS = {
    "rmsprop": (
        "RMSprop",
        {"rho": "alpha", "epsilon": "eps", "momentum": "momentum", "centered": "centered"},
    ),
    "adadelta": ("Adadelta", {"rho": "rho", "epsilon": "eps"}),
    "adam": ("Adam", {"beta_1": None, "beta_2": None, "epsilon": "eps"}),
    "sgd": ("SGD", {"momentum": "momentum", "nesterov": "nesterov"}),
}
# What the run record says where torch.optim's rule is not Keras 3's.
OPTIMIZER_NOTES = {
    "rmsprop": "torch.optim.RMSprop: epsilon after the square root (Keras 3: under it)",
    "adadelta": "torch.optim.Adadelta: Keras 3's rule",
    "adam": "torch.optim.Adam: epsilon beside the bias-corrected sqrt(v) (Keras: epsilon hat)",
    "sgd": "torch.optim.SGD: Keras 3's rule",
}
# Whose rule is not Keras 3's: the record says so (settings.own_rules),
# and the equivalence check expects their steps to depart.
OWN_RULES = {"rmsprop", "adam"}


def optimizer(torch, parameters, settings):
    """torch.optim's optimizer for the config's settings, and a LambdaLR
    stepped every batch for Keras 2's ``decay`` (None without one)."""
    name, renames = OPTIMIZERS[settings["name"]]
    kwargs = native.optimizer_arguments(settings, renames)
    if name == "Adam":
        kwargs["betas"] = (settings.get("beta_1", 0.9), settings.get("beta_2", 0.999))
    found = getattr(torch.optim, name)(parameters, lr=settings["learning_rate"], **kwargs)
    if not settings.get("decay"):
        return found, None
    start = settings["learning_rate"]
    return found, torch.optim.lr_scheduler.LambdaLR(
        found, lambda step: native.learning_rate(settings, step) / start
    )


class Adapter(native.NativeAdapter):
    backend = "native-torch"

    def __init__(self, framework, settings):
        super(Adapter, self).__init__(framework, settings)
        self.torch = None
        self.device = None
        self.process_group = False
        self.on_gpu = False
        self.precision = self.requested.get("precision", catalog.FLOAT32)
        self.autocast_dtype = None  # torch.bfloat16 or torch.float16 under mixed precision
        self.scaler = None  # torch.amp.GradScaler under float16

    def setup(self, threads, seed, devices, parallel=None):
        emulated = self._start(threads, devices, parallel, distributes=True)
        manifest.prepare(self.precision)
        self.applied.update(frameworks.torch_compile_cache())
        import numpy
        import torch

        self.torch = torch
        self.applied.update(frameworks.pin_torch(torch, threads))
        torch.manual_seed(seed)
        numpy.random.seed(seed)
        self.device = torch.device("cpu")
        if launch.distributes(self.parallel):
            group = frameworks.torch_process_group(torch, self.parallel, devices, self.backend)
            self.process_group = True
            self.applied["process_group_backend"] = group
        if devices:
            self.applied["data_parallel"] = self._describe_parallel(devices)
            if not emulated:
                if torch.cuda.device_count() < devices:
                    raise frameworks.no_gpus("torch", devices, [], self.backend)
                self.on_gpu = True
                self.device = torch.device("cuda", self.parallel["local_rank"])
        self.applied["device"] = str(self.device)
        manifest.set_torch(torch, self.precision, self.requested, self.on_gpu)
        compiled = self.requested.get("jit_compile") is True
        self.read_manifest = lambda: manifest.torch_manifest(
            torch, self.on_gpu, "torch.compile" if compiled else "eager"
        )
        if catalog.mixed(self.precision):
            self.autocast_dtype = getattr(torch, self.precision.replace("mixed_", ""))
            self.applied["precision"] = {
                "asked": self.precision,
                "autocast": "torch.autocast({}, {})".format(self.device.type, self.autocast_dtype),
            }

    def _autocast(self):
        """PyTorch's documented mixed precision: ops on autocast's lists run
        in the reduced dtype, the rest (losses, reductions) in float32."""
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return self.torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)

    def _in_precision(self, forward, net):
        """``forward`` under autocast, its outputs back in float32 (as
        autocast hands them to the loss and the softmax) once what ran is
        noted: the parameters' dtype and the outputs' (the last layer's
        compute)."""
        if self.autocast_dtype is None:
            return forward

        def forward_in_precision(x):
            with self._autocast():
                outputs = forward(x)
            if "compute_dtype" not in self.applied["precision"]:
                self.applied["precision"].update(
                    compute_dtype=str(outputs.dtype).replace("torch.", ""),
                    variable_dtype=str(next(net.parameters()).dtype).replace("torch.", ""),
                )
            return outputs.float()

        return forward_in_precision

    def _scaled_update(self, loss, optimizer):
        """The program's update under float16: the loss scaled
        (torch.amp.GradScaler), the step skipped on a non-finite gradient."""
        self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()

    def versions(self):
        import numpy

        torch = self.torch
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        return {
            "framework": "torch",
            "framework_version": torch.__version__,
            "numpy": numpy.__version__,
            "cuda": torch.version.cuda,
            "cudnn": cudnn,
        }

    def applied_settings(self):
        found = super(Adapter, self).applied_settings()
        found["inference_call"] = "model(x) under torch.inference_mode"
        return found

    def build(self, model_name, data_spec, hyper):
        torch = self.torch
        net = self.registry.builder(model_name, "torch")(torch, data_spec).to(self.device)
        if not dropout_on():  # the equivalence check
            for layer in net.modules():
                if isinstance(layer, torch.nn.modules.dropout._DropoutNd):
                    layer.p = 0.0
        if any(isinstance(layer, torch.nn.RNNBase) for layer in net.modules()):
            self.applied["recurrent_kernels"] = (
                "cuDNN (torch.nn.LSTM/GRU on CUDA)" if self.on_gpu else "torch's CPU LSTM/GRU"
            )
        forward = net
        if self.process_group and "optimizer" in hyper:  # all-reduces gradients in backward
            ids = [self.device.index] if self.on_gpu else None
            forward = torch.nn.parallel.DistributedDataParallel(net, device_ids=ids)
        # torch.compile is PyTorch's documented way to compile the step; on the
        # CPU its first epoch pays a long C++ build, so it follows jit_compile.
        compiled = self.requested.get("jit_compile") is True
        self.applied["torch_compile"] = compiled
        if compiled:
            self.applied["torch_compile_shapes"] = frameworks.torch_compile_shapes()
            self.applied.update(frameworks.torch_precompiled_headers())
        model = {
            "net": net,
            "forward": self._in_precision(torch.compile(forward) if compiled else forward, net),
            "predict": self._in_precision(net, net),
            "softmax": not self.registry.ends_in_features(model_name),
        }
        if "optimizer" in hyper:
            trained = [p for p in net.parameters() if p.requires_grad]
            model["optimizer"], model["schedule"] = optimizer(torch, trained, hyper["optimizer"])
            if self.autocast_dtype is torch.float16:  # float16 gradients underflow unscaled
                self.scaler = torch.amp.GradScaler(self.device.type)
                self.applied["precision"]["loss_scaling"] = "torch.amp.GradScaler (dynamic)"
            name = hyper["optimizer"]["name"]
            self.applied["optimizer"] = OPTIMIZER_NOTES[name]
            self.applied["own_rules"] = [OPTIMIZER_NOTES[name]] if name in OWN_RULES else []
        return model

    def load_initial_weights(self, model, layout, weights):
        torch_layers.load_keras_weights(self.torch, model["net"], layout, weights)

    @staticmethod
    def parameter_count(model):
        """Keras' count_params: the weights (frozen constants such as the
        LSTMs' second bias excluded) and batch-norm moving statistics."""
        net = model["net"]
        weights = [p for p in net.parameters() if p.requires_grad]
        statistics = [
            b for name, b in net.named_buffers() if name.endswith(("running_mean", "running_var"))
        ]
        return sum(t.numel() for t in weights + statistics)

    def _inputs(self, x):
        """Host arrays as device tensors: images channels-first, words int64,
        named inputs a dict of tensors."""
        if isinstance(x, dict):
            return {name: self._inputs(array) for name, array in x.items()}
        tensor = self.torch.from_numpy(x)
        if tensor.dim() == 4:
            tensor = tensor.permute(0, 3, 1, 2)
        elif not tensor.is_floating_point():
            tensor = tensor.long()
        return tensor.contiguous().to(self.device)

    def _labels(self, y):
        return self.torch.from_numpy(y.argmax(axis=1)).to(self.device)

    @staticmethod
    def _rows(inputs, rows):
        if isinstance(inputs, dict):
            return {name: tensor[rows] for name, tensor in inputs.items()}
        return inputs[rows]

    def train_epoch(self, model, x, y, batch_size):
        torch = self.torch
        inputs, labels = self._inputs(x), self._labels(y)  # fit()'s set-up: off the clock
        if self.process_group:
            torch.distributed.barrier()  # every process starts its epoch together
        start = time.perf_counter()
        schedule = model["schedule"]
        batches = (
            (self._rows(inputs, rows), labels[rows])
            for rows in native.batches(len(labels), batch_size)
        )

        def after_step(loss):
            if schedule is not None:
                schedule.step()
            self._time_first_step(start, loss.item)

        model["net"].train()
        total_loss, correct = program.train_epoch(
            torch,
            model["forward"],
            model["optimizer"],
            batches,
            after_step,
            program.update if self.scaler is None else self._scaled_update,
        )
        n = len(labels)
        loss, accuracy = float(total_loss) / n, float(correct) / n  # waits for the device
        seconds = time.perf_counter() - start
        if self.process_group:  # each process saw its share: the mean is the epoch's
            loss, accuracy = frameworks.mean_over_processes([loss, accuracy])
        return {"loss": loss, "accuracy": accuracy, "seconds": seconds}

    def evaluate(self, model, x, y, batch_size):
        torch = self.torch
        inputs, labels = self._inputs(x), self._labels(y)
        net = model["net"]
        net.eval()
        total_loss = torch.zeros((), dtype=torch.float64, device=self.device)
        correct = torch.zeros((), dtype=torch.long, device=self.device)
        with torch.inference_mode(), self._autocast():
            for rows in native.batches(len(labels), batch_size):
                logits = net(self._rows(inputs, rows))
                total_loss += torch.nn.functional.cross_entropy(
                    logits, labels[rows], reduction="sum"
                )
                correct += (logits.argmax(dim=1) == labels[rows]).sum()
        return float(total_loss) / len(labels), float(correct) / len(labels)

    def recurrent_ops(self, model, x):
        return frameworks.torch_recurrent_ops(self.torch, lambda: self.predict(model, x))

    def predict(self, model, x):
        model["net"].eval()
        net = model["predict"]
        # the host batch made a tensor inside the program's inference mode
        outputs = program.predict(self.torch, lambda x: net(self._inputs(x)), x, model["softmax"])
        return outputs.float().cpu().numpy()

    def training_outputs(self, model, x, draws):
        """The network's outputs in training mode (dropout on, a fresh mask
        each call), ``draws`` times, softmaxed as predict's: the
        equivalence check's dropout draws."""
        torch = self.torch
        net = model["net"]
        inputs = self._inputs(x)
        net.train()
        with torch.no_grad():
            outputs = torch.stack([net(inputs) for _ in range(draws)])
        net.eval()
        if model["softmax"]:
            outputs = torch.softmax(outputs, dim=-1)
        return outputs.float().cpu().numpy()

    def synchronize(self):
        if self.on_gpu:
            self.torch.cuda.synchronize()

    def peak_device_memory_mb(self):
        return frameworks.PEAK_MEMORY["torch"]() if self.on_gpu else None

    def close(self):
        if self.process_group:
            frameworks.leave_process_group()

    def replica_divergence(self, model):
        if not self.process_group:
            return None
        return frameworks.divergence_over_processes(model["net"].parameters())
