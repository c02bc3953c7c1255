"""PyTensor's own profiler (``pytensor.compile.profiling.ProfileStats``)
over the window: every Apply node of the compiled training step (or
prediction) with its calls and its own time, by op (``str(op)``: ``Gemm``,
``CorrMM``, ``Elemwise{Composite{...}}``); the update rules' nodes are the
optimizer's (``apply_nodes`` says how they are told apart). PyTensor
compiles for the CPU only: its ops are the host's."""

from dlbench.run.op_profilers.apply_nodes import FunctionProfiler


class Profiler(FunctionProfiler):
    name = "pytensor.compile.profiling"
    framework_module = "pytensor"
    function_module = "pytensor.compile.function.types"
