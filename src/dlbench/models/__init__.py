"""The workloads and what is computed from their definitions: each
workload's folder (its facts and one implementation per family), the
families' layer helpers and optimizer mappings, the shared initial weights'
layout, analytic FLOPs and lines of code. Runs in the backends'
environments and in the workflow's.

Imports: catalog, and data (FLOPs read a prepared file's shapes). The
catalog reads the workloads' facts from models.workloads in turn: one
registry built from both is the next step (issue 62)."""
