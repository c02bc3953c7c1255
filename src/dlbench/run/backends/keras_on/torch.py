"""Keras 3 on torch: its threads and compile cache, DistributedDataParallel
in one process per device on devices >= 2 (started by torchrun, see
dlbench.run.launch), its hidden settings, and which recurrent kernels its
GRU/LSTM ran (keras_adapter; what a module here provides: keras_on).
Importable on Python 3.6."""

import importlib

from dlbench.run import manifest
from dlbench.run.backends import frameworks

# Keras 3's torch GRU/LSTM where it does not call cuDNN: the CPU, torch.compile.
TORCH_LOOP = (
    "Keras' torch {} loop: input projections in one product, then one recurrent "
    "product and the gates per time step (no cuDNN: the CPU, or under torch.compile)"
)


def setup(adapter, threads, seed):
    adapter.applied.update(frameworks.torch_compile_cache())
    import torch

    adapter.applied.update(frameworks.pin_torch(torch, threads))


def versions(torch):
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {"cuda": torch.version.cuda, "cudnn": cudnn}


def set_hidden_settings(adapter):
    import torch

    manifest.set_torch(torch, adapter.precision, adapter.requested, adapter.on_gpu)


def read_manifest(adapter, threads):
    import torch

    return manifest.torch_manifest(torch, adapter.on_gpu, adapter.compile_mode("torch.compile"))


def one_device(adapter):
    """Keras' own placement on the GPU; a GPU run that finds none fails."""
    if adapter.emulated:
        return
    import torch

    if not torch.cuda.is_available():
        raise frameworks.no_gpus(adapter.framework, 1, [])


def distribute(adapter, devices):
    """This process' part of torchrun's process group: its model's train
    step goes through DistributedDataParallel (``built``)."""
    import torch

    group = frameworks.torch_process_group(torch, adapter.parallel, devices)
    adapter.process_group = True
    adapter.applied["process_group_backend"] = group


def built(adapter, model):
    """What torch.compile compiled with (where Keras compiles the steps), and
    under a process group the train step through DistributedDataParallel."""
    if adapter.jit_compile:
        adapter.applied["torch_compile_shapes"] = frameworks.torch_compile_shapes()
        adapter.applied.update(frameworks.torch_precompiled_headers())
    if adapter.process_group:
        distributed_train_step(model, adapter.parallel)


def epoch_begins(adapter):
    if adapter.process_group:
        import torch.distributed as dist

        dist.barrier()  # every process starts its epoch together


def replica_divergence(adapter, model):
    """The largest difference between the processes' weights; None without
    a process group."""
    if not adapter.process_group:
        return None
    return frameworks.divergence_over_processes(model.parameters())


def close(adapter):
    if adapter.process_group:
        frameworks.leave_process_group()


def recurrent_ops(adapter, model, x):
    """Which recurrent operators Keras' GRU/LSTM ran on torch."""
    import torch

    return frameworks.torch_recurrent_ops(torch, lambda: adapter.predict(model, x))


def recurrent_kernel(name, devices):
    """Keras 3's torch GRU/LSTM calls torch._VF, cuDNN's kernels, on CUDA
    outside torch.compile and its own loop otherwise (probe_recurrent_paths
    records which; the record's recurrent_ops shows what ran)."""
    return "torch._VF.{} on CUDA, Keras' own loop otherwise".format(name)


def probe_recurrent_paths(adapter, name):
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
        setattr(rnn, function, _path_probe(adapter, name, getattr(rnn, function), described))
    return True


def _path_probe(adapter, name, path, described):
    def probe(*args, **kwargs):
        outputs = path(*args, **kwargs)
        adapter.recurrent_kernels[name] = described
        return outputs

    return probe


def distributed_train_step(model, parallel):
    """Keras' torch train step with the forward pass through
    DistributedDataParallel, which all-reduces the gradients during the
    backward pass (Keras' own step calls the bare model). The rest is Keras
    3.15's TorchTrainer.train_step: loss, backward, optimizer, metrics."""
    import torch
    from keras.src.trainers.data_adapters import data_adapter_utils
    from torch.nn.parallel import DistributedDataParallel

    device_ids = None if parallel["accelerator"] != "gpu" else [parallel["local_rank"]]
    wrapped = DistributedDataParallel(model, device_ids=device_ids)

    def train_step(data):
        x, y, sample_weight = data_adapter_utils.unpack_x_y_sample_weight(data)
        y_pred = wrapped(x, training=True)
        model.zero_grad()
        loss = model._compute_loss(
            x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=True
        )
        model._loss_tracker.update_state(loss, sample_weight=_batch_length(x))
        loss = model.optimizer.scale_loss(loss)
        loss.backward()
        weights = model.trainable_weights[:]
        with torch.no_grad():
            model.optimizer.apply([w.value.grad for w in weights], weights)
        return model.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    model.train_step = train_step  # the wrapper lives in this closure only:
    return wrapped  # as an attribute of the model it would contain itself


def _batch_length(x):
    first = next(iter(x.values())) if isinstance(x, dict) else x
    return first.shape[0]
