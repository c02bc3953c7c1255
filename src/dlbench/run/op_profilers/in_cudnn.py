"""CUDA events around each cuDNN and cuBLAS call of the window (native-cudnn).

Every library call of the native-cudnn workloads passes through the run's
``cudnn_layers.Libraries`` (its ``cudnn`` and ``cublas`` methods). For the
window those two are wrapped on that object: each call is put between two
CUDA events recorded on the stream the handles use (the null stream), and
``stop`` waits for the device and reads each pair's span on the device's
clock, from an event recorded at the start. A call that queues no device work
(a descriptor's set-up) spans next to nothing. Where the device waits for the
host to queue a kernel, the kernel's span includes that wait: the events
bracket the call as the stream sees it. Runs on an NVIDIA GPU only (the
backend's only device); written from CUDA's and CuPy's event API, not yet
run on a GPU.
"""

from dlbench.run.op_profiling import DEVICE, Event, OpProfiler

MILLISECONDS = 1e-3
STREAM = "null stream"


class Profiler(OpProfiler):
    name = "CUDA events around each cuDNN and cuBLAS call"

    def unavailable(self):
        if getattr(self.adapter, "cupy", None) is None:
            return "native-cudnn's calls are timed on an NVIDIA GPU, and this run has none"
        return None

    def version(self):
        return "cuDNN {}".format(self.adapter.libraries.cudnn_version())

    def start(self):
        cupy, libraries = self.adapter.cupy, self.adapter.libraries
        self.spans = []  # (call, event before, event after)

        def timed(call):
            def between_events(name, *args):
                before, after = cupy.cuda.Event(), cupy.cuda.Event()
                before.record()
                try:
                    call(name, *args)
                finally:
                    after.record()
                    self.spans.append((name, before, after))

            return between_events

        self.origin = cupy.cuda.Event()
        self.origin.record()
        libraries.cudnn = timed(libraries.cudnn)  # shadows the method on this object only
        libraries.cublas = timed(libraries.cublas)

    def stop(self):
        cupy, libraries = self.adapter.cupy, self.adapter.libraries
        del libraries.cudnn, libraries.cublas  # the class's methods again
        cupy.cuda.Device().synchronize()
        since = cupy.cuda.get_elapsed_time
        return [
            Event(
                name,
                STREAM,
                since(self.origin, before) * MILLISECONDS,
                since(self.origin, after) * MILLISECONDS,
                DEVICE,
                None,
            )
            for name, before, after in self.spans
        ]
