"""Theano's own profiler (``theano.compile.profiling.ProfileStats``) over
the window: every Apply node of the functions Keras 2 compiled (its
``train_function``, with the metrics' function it calls after it, or its
``predict_function``) with its calls and its own time, by op (``str(op)``:
``Dot22``, ``CorrMM``, ``Elemwise{Composite{...}}``); the update rules'
nodes are the optimizer's (``apply_nodes`` says how they are told apart)."""

from dlbench.run.op_profilers.apply_nodes import FunctionProfiler


class Profiler(FunctionProfiler):
    name = "theano.compile.profiling"
    framework_module = "theano"
    function_module = "theano.compile.function_module"

    def unavailable(self):
        import theano

        if not str(theano.config.device).startswith("cpu"):
            # its GPU ops run asynchronously: a node's time would be its launch
            return "Theano's profiler times GPU ops only with CUDA_LAUNCH_BLOCKING=1"
        return None
