"""Data parallelism of the Keras adapter (keras_adapter), the way each
backend's documentation does it: Keras' DataParallel distribution on JAX, a
MirroredStrategy on TensorFlow, DistributedDataParallel in one process per
device on torch (started by torchrun, see dlbench.run.launch); on one device,
Keras' own placement. Importable on Python 3.6."""

from dlbench.run.backends import frameworks


class KerasDataParallel(object):
    """The Keras adapter's devices: its ``setup`` calls these."""

    def _one_device(self):
        """One device: Keras' own placement (the GPU), no distribution; a
        GPU run that would find none fails rather than run on the CPU."""
        if self.emulated:
            return
        if self.framework == "jax":
            import jax

            frameworks.jax_devices(jax, self.framework, 1, False)
        elif self.framework == "tensorflow":
            import tensorflow as tf

            frameworks.tensorflow_devices(tf, self.framework, 1, False)
        elif self.framework == "torch":
            import torch

            if not torch.cuda.is_available():
                raise frameworks.no_gpus(self.framework, 1, [])

    def _distribute_jax(self, devices):
        import jax

        found = frameworks.jax_devices(jax, self.framework, devices, self.emulated)
        self.distribution = self.keras.distribution.DataParallel(devices=found)
        # Emulated CPU devices: XLA's CPU all-reduce gives up when one device
        # runs ahead ("only 1 of them arrived on time"); waiting for every
        # step's result keeps them together. Real GPUs need no such wait.
        self.step_sync = self.emulated

    def _distribute_tensorflow(self, devices):
        import tensorflow as tf

        found = frameworks.tensorflow_devices(tf, self.framework, devices, self.emulated)
        self.strategy = tf.distribute.MirroredStrategy(found)
        if self.emulated:
            # XLA cannot reach the other logical CPUs' variable copies
            # ("Trying to access resource ... located in device CPU:1").
            self.forced_jit = "off: XLA cannot use variables of other emulated CPU devices"

    def _distribute_torch(self, devices):
        import torch

        group = frameworks.torch_process_group(torch, self.parallel, devices)
        self.process_group = True
        self.applied["process_group_backend"] = group

    def _describe_parallel(self, devices):
        described = {
            "devices": devices,
            "accelerator": self.parallel["accelerator"],
            "method": self.parallel.get("method"),
            "processes": self.parallel.get("processes", 1),
        }
        if self.step_sync:
            described["step_sync"] = "every step's loss read (emulated XLA CPU devices)"
        return described

    def _scope(self):
        """Where models are built and trained: under the distribution."""
        if self.distribution is not None:
            return self.distribution.scope()
        if self.strategy is not None:
            return self.strategy.scope()
        return _Nothing()


class _Nothing(object):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


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
