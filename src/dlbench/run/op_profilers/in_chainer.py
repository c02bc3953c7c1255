"""chainer.function_hooks.TimerHook over the window: every FunctionNode's
forward and backward, by the function's name (``LinearFunction``,
``Convolution2DGradW``, ...), with the hook's calls (a forward and a
backward are one occurrence each) and elapsed time.

The hook's times are inclusive: a function's backward applies other
FunctionNodes (``LinearFunction``'s backward runs ``LinearGradData`` and
``LinearGradWeight``), and the hook times both the outer call and the ones
inside it. The hook below records how deep each call was when it ended, so
that each call keeps its own time: its elapsed time less that of the calls
made inside it.

Chainer's optimizer update (``optimizer.update`` -> each parameter's
``UpdateRule``) runs numpy (or iDeep, CuPy) on the parameters directly, not
FunctionNodes: the hook does not see it, and its time is in the window's
unexplained rest, as is every array operation outside a FunctionNode (the
loop's numpy arg-max of the logits, the conversion of the batch).

On a GPU (CuPy arrays), the hook times each call with CUDA events on the
stream: the device's time (from Chainer's source; not run here, where the
backend is CPU only).
"""

import collections

from dlbench.run.op_profiling import DEVICE, HOST, OpProfiler, OpTime


class Profiler(OpProfiler):
    name = "chainer.function_hooks.TimerHook"

    def version(self):
        import chainer

        return chainer.__version__

    def start(self):
        self.hook = _depth_timer_hook()
        self.hook.__enter__()

    def stop(self):
        self.hook.__exit__(None, None, None)
        return own_times(self.hook.call_history, self.hook.depths, self.hook.on_device)


def _depth_timer_hook():
    """A TimerHook that also keeps, for each entry of its call history, the
    depth of the call (1: called outside any other function) and whether it
    ran on a GPU."""
    import numpy
    from chainer.function_hooks import TimerHook

    class DepthTimerHook(TimerHook):
        def __init__(self):
            super(DepthTimerHook, self).__init__()
            self.depths = []
            self.on_device = []

        def _postprocess(self, function):
            self.depths.append(self._depth)
            self.on_device.append(self.xp is not numpy)
            super(DepthTimerHook, self)._postprocess(function)

    return DepthTimerHook()


def own_times(call_history, depths, on_device):
    """[OpTime] of the hook's calls, each with its elapsed time less that of
    the calls nested in it. The history lists each call when it ended, so a
    call's nested calls are the entries one level deeper just before it."""
    calls = collections.Counter()
    seconds = collections.defaultdict(float)
    places = {}
    nested = collections.defaultdict(float)  # depth: ended calls' time, not yet given to a parent
    for (name, elapsed), depth, device in zip(call_history, depths, on_device):
        own = elapsed - nested.pop(depth + 1, 0.0)
        nested[depth] += elapsed
        calls[name] += 1
        seconds[name] += max(own, 0.0)
        places.setdefault(name, DEVICE if device else HOST)
    return [OpTime(name, calls[name], seconds[name], places[name], None) for name in sorted(calls)]
