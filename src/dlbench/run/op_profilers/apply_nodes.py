"""What Theano's and PyTensor's op profilers share: the framework's own
``ProfileStats``, which times every Apply node of a compiled function.

A compiled function is profiled when it holds a ``ProfileStats`` (its
``profile``) and its virtual machine times its thunks (``time_thunks``):
what ``FunctionMaker.create`` sets up for a function compiled with
``profile=``; compiling with it changes nothing else of the function (the
same graph, thunks and linker). The run's functions are compiled without
it, before the window: during the window every compiled function called
gets both, on its first call (a few attribute assignments), and after the
window gets back what it had, so that profiling is never on in the timed
epochs and the window runs the very functions the epochs ran (no second
compile, no second copy of the weights or of the optimizer's state).

An Apply node is the optimizer's when it is elementwise arithmetic (or a
broadcast), feeds only the function's updates (none of its outputs, such as
the loss) and reads the optimizer's own state (a shared variable that no
output reads: its accumulators, its step counter, its learning rate) or a
value of another such node: the update rules after the gradients. The
gradients feed only updates too, but read no optimizer state, or are
products into which the graph's optimizations folded the learning rate
(``Dot22Scalar``: a gradient's product, and counted as one). An elementwise
node that reads a gradient and feeds nothing but the optimizer's nodes is
the optimizer's too (the part of a rule that reads only gradients,
``(1 - rho) * sqr(gradient)``). Not told apart: an update that reads no
optimizer state at all (plain SGD at a constant rate, ``param - lr *
gradient``, which the graph's optimizations may fuse with the gradient's
product into one ``Gemm``) looks like a metric's update (Keras 2.3's
running accuracy): both stay outside the optimizer's scope."""

import collections
import importlib
import sys
from typing import Optional

from dlbench.run.op_profiling import HOST, OPTIMIZER, OpProfiler, OpTime


class FunctionProfiler(OpProfiler):
    """``ProfileStats`` over the compiled functions (``Function`` of
    ``function_module``) that the window calls."""

    framework_module: Optional[str] = None  # "theano" or "pytensor"
    function_module: Optional[str] = None  # the module of its compiled ``Function``

    def version(self):
        return importlib.import_module(self.framework_module).__version__

    def start(self):
        function_class = importlib.import_module(self.function_module).Function
        stats_class = importlib.import_module(
            self.framework_module + ".compile.profiling"
        ).ProfileStats
        self.function_class = function_class
        self.unprofiled_call = function_class.__dict__["__call__"]
        # id -> (function, its ProfileStats, its profile and timing before)
        self.profiled = collections.OrderedDict()
        profiled, unprofiled_call = self.profiled, self.unprofiled_call

        def profiled_call(function, *args, **kwargs):
            if id(function) not in profiled:
                machine = _virtual_machine(function)
                stats = stats_class(atexit_print=False, flag_time_thunks=True)
                stats.ignore_first_call = False  # the window's first call is a steady one
                profiled[id(function)] = (
                    function,
                    stats,
                    function.profile,
                    getattr(machine, "time_thunks", False),
                )
                function.profile = stats
                machine.time_thunks = stats.flag_time_thunks
            return unprofiled_call(function, *args, **kwargs)

        function_class.__call__ = profiled_call

    def stop(self):
        self.function_class.__call__ = self.unprofiled_call
        found = collections.OrderedDict()  # (name, scope) -> [calls, seconds]
        for function, stats, profile, timing in self.profiled.values():
            function.profile = profile
            _virtual_machine(function).time_thunks = timing
            in_optimizer = optimizer_nodes(function.maker.fgraph)
            node_seconds = 0.0
            for key, seconds in stats.apply_time.items():
                node = key[1] if isinstance(key, tuple) else key  # PyTensor: (fgraph, node)
                calls = stats.apply_callcount.get(key, 0)
                scope = OPTIMIZER if node in in_optimizer else None
                entry = found.setdefault((str(node.op), scope), [0, 0.0])
                entry[0] += calls
                entry[1] += seconds
                node_seconds += seconds
            # ProfileStats' own totals against its nodes' sum: the rest is the
            # virtual machine's and Function.__call__'s own Python
            print(
                "{} ProfileStats: {} ({} nodes, {} optimizer's) called {} times, "
                "{:.4f} s in Function.__call__, {:.4f} s in its VM, {:.4f} s in its nodes".format(
                    self.framework_module,
                    function.name or "a function",
                    len(function.maker.fgraph.apply_nodes),
                    len(in_optimizer),
                    stats.fct_callcount,
                    stats.fct_call_time,
                    stats.vm_call_time,
                    node_seconds,
                ),
                file=sys.stdout,
            )
            sys.stdout.flush()
        self.profiled = collections.OrderedDict()
        return [
            OpTime(name, calls, seconds, HOST, scope)
            for (name, scope), (calls, seconds) in found.items()
        ]


def _virtual_machine(function):
    """The function's virtual machine: ``vm`` in PyTensor, ``fn`` in Theano."""
    machine = getattr(function, "vm", None)
    return machine if machine is not None else function.fn


# The ops an update rule is made of: arithmetic (Theano fuses it into
# ``Elemwise{Composite{...}}``) and the broadcasts of its scalars.
UPDATE_RULE_OPS = ("Elemwise", "DimShuffle")


def optimizer_nodes(fgraph):
    """The Apply nodes of ``fgraph`` that are the optimizer's update (the
    module's docstring says which). ``fgraph.update_mapping``: output index
    -> input index."""
    updated = getattr(fgraph, "update_mapping", None) or {}
    if not updated:
        return set()
    results = [output for index, output in enumerate(fgraph.outputs) if index not in updated]
    forward_variables, forward_nodes = _ancestors(results)
    order = fgraph.toposort()
    candidates = [
        node
        for node in order
        if node not in forward_nodes and type(node.op).__name__ in UPDATE_RULE_OPS
    ]
    # the rules that read the optimizer's state (or a value computed from it)
    state = set(variable for variable in fgraph.inputs if variable not in forward_variables)
    in_optimizer = set()
    for node in candidates:
        if any(variable in state for variable in node.inputs):
            in_optimizer.add(node)
            state.update(node.outputs)
    # from the updates back: elementwise parts of a rule that read only gradients
    consumers = {}
    for node in order:
        for variable in node.inputs:
            consumers.setdefault(variable, []).append(node)
    for node in reversed(candidates):
        read_by = [reader for variable in node.outputs for reader in consumers.get(variable, ())]
        if (
            node not in in_optimizer
            and type(node.op).__name__ == "Elemwise"
            and any(variable not in forward_variables for variable in node.inputs)
            and read_by
            and all(reader in in_optimizer for reader in read_by)
        ):
            in_optimizer.add(node)
    return in_optimizer


def _ancestors(variables):
    """The variables and Apply nodes that ``variables`` are computed from."""
    seen_variables, seen_nodes = set(), set()
    pending = list(variables)
    while pending:
        variable = pending.pop()
        if variable in seen_variables:
            continue
        seen_variables.add(variable)
        node = variable.owner
        if node is not None and node not in seen_nodes:
            seen_nodes.add(node)
            pending.extend(node.inputs)
    return seen_variables, seen_nodes
