# Two commands for a fresh machine:
#   make smoke   set up the main environment, then run the offline smoke benchmark and its report
#   make test    run the tests (unit and end to end)
# and make smoke-full: every kind of workload, small and offline (config/smoke-full.yaml);
# while developing, make check: the unit tests only (no backend environment, no workflow run).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
JOBS ?= 2
# Test processes (pytest-xdist): the end-to-end tests wait on Snakemake and
# SLURM and run on one core each, so two keep a 2-core machine busy (three
# were tried on Zen 3: both CPUs were busy all along with two as well, and
# the third process added 5 % of CPU: docs/measured-times.md).
TEST_WORKERS ?= 2
# pip retries an unreachable index five times with back-off for every
# package; keras-torch's CPU wheel index (envs/keras-torch.yaml) is looked up
# for each of its packages. One retry keeps flaky networks working and an
# offline mirror (no route to download.pytorch.org) quick.
export PIP_RETRIES ?= 1

.PHONY: setup system smoke smoke-full report readme-picture check test lint clean gpu-kit

$(BIN)/snakemake: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@

setup: $(BIN)/snakemake

smoke: setup
	$(BIN)/snakemake --configfile config/smoke.yaml -j$(JOBS)
	$(BIN)/snakemake --configfile config/smoke.yaml --report results/report.html

smoke-full: setup
	$(BIN)/snakemake --configfile config/smoke-full.yaml -j$(JOBS)
	$(BIN)/snakemake --configfile config/smoke-full.yaml --report results/report.html

report: setup
	$(BIN)/snakemake --report results/report.html

# The README's picture, from the GPU records in records/gpu.
readme-picture: setup
	$(BIN)/python docs/images/relative_speed_h200.py

# The wheels a GPU machine without network lacks for the GPU campaign, in
# .gpu-kit (docs/gpus.md): Python 3.12 by default (GPU_PYTHON=3.11 for another);
# GPU_KIT_LIMIT_MIB: the most kit and tree may take together (0: no limit).
GPU_PYTHON ?= 3.12
GPU_KIT_LIMIT_MIB ?= 0
gpu-kit: setup
	$(BIN)/python -m dlbench.environments.gpu_kit --out .gpu-kit --python-version $(GPU_PYTHON) \
		--size-limit-mib $(GPU_KIT_LIMIT_MIB)

# What the tests need from the machine beyond .venv (Chromium and its driver,
# SLURM and munge, g++, the Pythons the env files pin): installed with apt-get
# on Debian as root; anywhere else make stops with the command to run.
system: setup
	$(BIN)/python tests/system_requirements.py --install

# pytest's exit status 5 means it collected no test: a failure, not a pass.
PYTEST = status=0; $(BIN)/pytest -ra -n $(TEST_WORKERS) $(1) || status=$$?; \
	if [ $$status -eq 5 ]; then echo "pytest collected no tests" >&2; exit 1; fi; exit $$status

check: setup
	$(call PYTEST,tests/unit)

test: setup system
	$(call PYTEST,)

lint: setup
	$(BIN)/ruff check src tests workflow/scripts benchmarks
	$(BIN)/ruff format --check src tests workflow/scripts benchmarks
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint --configfile config/smoke.yaml
	$(BIN)/mypy

clean:
	rm -rf results resources logs .snakemake
