"""What executes in a backend's environment (Python 3.6 and later): one
run's harness and its supervisor, the adapters of every family, each
framework's op profiler (op_profilers/), the equivalence check's run, the
probes, the manifest of hidden settings, the files a run reads and writes.

Imports: catalog, host, models, record, registry."""
