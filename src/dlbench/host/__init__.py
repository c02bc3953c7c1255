"""The machine this process runs on: its CPU's instruction sets as oneDNN
sees them (cpu_isa), its NVIDIA GPUs (gpus), its CPUs, threads and the facts
a record keeps of it (runtime). Read at planning, by the supervisor and in
every backend's environment: importable on Python 3.6.

Imports: nothing of dlbench's but itself."""
