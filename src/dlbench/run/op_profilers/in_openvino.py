"""OpenVINO's per-node performance counters (``PERF_COUNT``) over the
window's inference calls: for each node of the graph the plugin executed, its
real time, summed by node type (``Convolution``, ``FullyConnected``, ``Add``,
``Transpose``, ``Reorder``: the plugin's nodes after its fusions).

Keras' OpenVINO backend compiles its predict graph once per input signature
(``OpenVINOTrainer._get_compiled_model``) without counters, and a compiled
model takes no ``PERF_COUNT`` afterwards. So ``start()`` compiles the same
graph again with ``PERF_COUNT`` on (Keras' own parameters and outputs, through
``openvino.compile_model``, which the adapter pins to the run's precision),
runs it once on the last batch Keras inferred (the first call of a compiled
model allocates its memory: outside the window), and puts it in the place of
Keras' compiled model until ``stop()`` puts Keras' back.

The CPU plugin reports each node's average over every inference since the
compilation (whole microseconds, each call's time truncated): a node's window
time is that average times the calls (counted by the stand-in, which calls
the same ``InferRequest.infer`` as ``CompiledModel.__call__``) less the
warm-up call's. Nodes the plugin fused or skipped (status ``NOT_RUN``,
``OPTIMIZED_OUT``) took no time. The CPU plugin's nodes run on the host; a GPU
plugin's counters time its kernels on the device (DEVICE, not tried here:
Keras' backend compiles for the CPU).
"""

from dlbench.run.op_profiling import DEVICE, HOST, OpProfiler, OpTime

PERF_COUNT = {"PERF_COUNT": True}
EXECUTED = "EXECUTED"  # the other statuses: NOT_RUN, OPTIMIZED_OUT (no time)


class Profiler(OpProfiler):
    name = "OpenVINO performance counters (PERF_COUNT)"

    def version(self):
        import openvino

        return openvino.__version__

    def start(self):
        self.profiled = []  # (model, Keras' compiled model, stand-in, warm-up times)
        for model in _compiled_keras_models([self.model]):
            original = model.ov_compiled_model
            counting = _CountingModel(_compile_with_counters(model))
            counting.warm_up(_last_inputs(original))
            warm_up = _node_microseconds(counting.request.profiling_info, 1)
            counting.calls = 0
            self.profiled.append((model, original, counting, warm_up))
        if not self.profiled:
            raise RuntimeError("no Keras model with a compiled OpenVINO predict graph to profile")
        for model, _, counting, _ in self.profiled:  # Keras' cache check passes: same shapes
            model.ov_compiled_model = counting

    def stop(self):
        totals = {}
        for model, original, counting, warm_up in self.profiled:
            if model.ov_compiled_model is counting:
                model.ov_compiled_model = original
            if not counting.calls:
                continue
            device = str(getattr(model, "ov_device", "CPU"))
            place = HOST if device.upper().startswith("CPU") else DEVICE
            # average over the warm-up and the window's calls, times them, less the warm-up
            found = _node_microseconds(counting.request.profiling_info, counting.calls + 1)
            for node, (kind, microseconds) in found.items():
                key = (kind, place)
                seconds = max(0, microseconds - warm_up.get(node, (kind, 0))[1]) * 1e-6
                calls, total = totals.get(key, (0, 0.0))
                totals[key] = (calls + counting.calls, total + seconds)
        return [
            OpTime(kind, calls, seconds, place, None)
            for (kind, place), (calls, seconds) in sorted(totals.items())
        ]


class _CountingModel(object):
    """Stands in for Keras' compiled model: infers on the counted model's
    own request, as ``CompiledModel.__call__`` does, and counts the calls."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.request = compiled.create_infer_request()
        self.calls = 0

    def __call__(self, inputs=None, share_inputs=True, share_outputs=False, decode_strings=True):
        self.calls += 1
        return self.request.infer(
            inputs,
            share_inputs=share_inputs,
            share_outputs=share_outputs,
            decode_strings=decode_strings,
        )

    def warm_up(self, inputs):
        self(inputs)

    def __getattr__(self, name):
        return getattr(self.compiled, name)


def _compiled_keras_models(candidates):
    from keras.src.backend.openvino.trainer import OpenVINOTrainer

    return [
        found
        for found in candidates
        if isinstance(found, OpenVINOTrainer)
        and getattr(found, "ov_compiled_model", None) is not None
        and not isinstance(found.ov_compiled_model, _CountingModel)
    ]


def _compile_with_counters(model):
    """Keras' predict graph of ``model`` (its parameters, its outputs and
    their masks, as ``_get_compiled_model`` assembles them), compiled again
    with the performance counters on."""
    import openvino
    import openvino.opset16 as ov_opset
    from keras.src import backend, tree

    parameters = [param.output.get_node() for param in tree.flatten(model.struct_params)]
    outputs = tree.flatten(model.struct_outputs)
    results = [ov_opset.result(output.output) for output in outputs]
    for index in sorted(getattr(model, "_output_mask_indices", {}) or {}):
        results.append(ov_opset.result(backend.get_keras_mask(outputs[index]).output))
    graph = openvino.Model(results=results, parameters=parameters)
    return openvino.compile_model(graph, model.ov_device, dict(PERF_COUNT))


def _last_inputs(compiled):
    """Copies of the inputs Keras' compiled model inferred last (the
    window's batch shape), for the warm-up call."""
    import numpy

    request = compiled._infer_request or compiled.create_infer_request()
    return [numpy.array(tensor.data) for tensor in request.input_tensors]


def _node_microseconds(profiling_info, calls):
    """{node name: (node type, microseconds over ``calls`` inferences)} of
    the nodes the plugin ran, from its per-node averages."""
    found = {}
    for node in profiling_info:
        if not str(node.status).endswith(EXECUTED):
            continue
        average = node.real_time.total_seconds() * 1e6
        found[node.node_name] = (node.node_type, round(average) * calls)
    return found
