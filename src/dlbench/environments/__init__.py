"""The backends' environments: env files to venvs, conda environments or
existing interpreters, checked (run.envcheck runs inside each); version
variants; the GPU kit.

Imports: catalog, host, run."""
