"""The workloads and what is computed from their definitions: each
workload's folder (its facts and one implementation per family), the
families' layer helpers and optimizer mappings, each family's program (what
a user writes around a model to train it or ask it), the shared initial
weights' layout, analytic FLOPs and lines of code. Runs in the backends'
environments and in the workflow's.

Imports: catalog. What a config adds (a user's own model) joins the
workloads in a registry (dlbench.registry), which imports models, never
the other way."""
