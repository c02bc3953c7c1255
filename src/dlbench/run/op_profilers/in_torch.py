"""torch.profiler over the window: every aten op and autograd node with its
own time on the host and, on a GPU, every kernel and copy on the device
(Kineto's CUDA activity). Ops run inside ``torch.optim``'s step (its
``Optimizer.step#...`` range) are the optimizer's update. Keras' optimizers
on torch have no range of their own: for the window, a Keras model's
optimizer applies its update inside one named the same way."""

from dlbench.run.op_profiling import DEVICE, HOST, OPTIMIZER, Event, OpProfiler

OPTIMIZER_RANGE = "Optimizer.step#"
MICROSECONDS = 1e-6


class Profiler(OpProfiler):
    name = "torch.profiler"

    def version(self):
        import torch

        return torch.__version__

    def _on_gpu(self):
        import torch

        return bool(self.adapter.parallel.get("devices")) and torch.cuda.is_available()

    def start(self):
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if self._on_gpu():
            activities.append(ProfilerActivity.CUDA)
        self.session = profile(activities=activities, record_shapes=False, with_stack=False)
        self.scoped = _scope_keras_optimizer(self.model)
        self.session.start()

    def stop(self):
        self.session.stop()
        if self.scoped is not None:
            del self.scoped.apply  # the optimizer's own method again
        return [_event(found) for found in self.session.events() if _timed(found)]


def _scope_keras_optimizer(model):
    """A Keras model's optimizer, its ``apply`` wrapped in a range named as
    torch.optim's step; None for a model without one (native torch's)."""
    optimizer = getattr(model, "optimizer", None)
    apply = getattr(optimizer, "apply", None)
    if apply is None:
        return None
    from torch.profiler import record_function

    name = OPTIMIZER_RANGE + type(optimizer).__name__ + ".apply"

    def in_range(*args, **kwargs):
        with record_function(name):
            return apply(*args, **kwargs)

    optimizer.apply = in_range
    return optimizer


def _timed(found):
    return found.time_range.end > found.time_range.start and not found.name.startswith("[")


def _in_optimizer(found):
    """The event is torch.optim's step range, or inside it."""
    while found is not None:
        if found.name.startswith(OPTIMIZER_RANGE):
            return True
        found = found.cpu_parent
    return False


def _event(found):
    on_device = "CUDA" in str(getattr(found, "device_type", ""))
    place = DEVICE if on_device else HOST
    lane = (found.device_index, found.thread) if on_device else found.thread
    scope = OPTIMIZER if _in_optimizer(found) else None
    return Event(
        found.name,
        lane,
        found.time_range.start * MICROSECONDS,
        found.time_range.end * MICROSECONDS,
        place,
        scope,
    )
