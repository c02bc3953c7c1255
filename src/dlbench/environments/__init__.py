"""The backends' environments: env files to venvs, conda environments or
existing interpreters, checked (run.envcheck runs inside each); version
variants; the GPU kit. One module per job (``env_files``, ``interpreters``,
``venvs``, ``setup_steps``, ``checks``); callers import the module that
holds what they use.

Imports: catalog, host, run."""
