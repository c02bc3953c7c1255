"""Each framework's own op profiler behind one small API
(dlbench.run.op_profiling.OpProfiler): one module per framework,
``in_<framework>.py``, each with its class ``Profiler``. Importable on
Python 3.6; a module imports its framework only when the window starts."""
