# HomeLoop: `make run` builds the default home set, `make test` runs the tests.
# Each target creates the virtual environment first if it is missing or stale.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test bench serve stop clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "HomeLoop needs Python 3.11, found " + sys.version.split()[0]'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m homeloop.flows.local init
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/homeloop build

# One test process per core, each given whole modules (tests/conftest.py starts the slowest first).
test: $(STAMP)
	$(BIN)/python -m pytest -n auto --dist loadfile --no-loadscope-reorder

bench: $(STAMP)
	$(BIN)/python benchmarks/generate.py
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/audit.py
	$(BIN)/python benchmarks/selection.py
	$(BIN)/python benchmarks/furnish.py
	$(BIN)/python benchmarks/usd_export.py
	$(BIN)/python benchmarks/applicability.py
	$(BIN)/python benchmarks/build.py
	$(BIN)/python benchmarks/verify.py
	$(BIN)/python benchmarks/sim_dynamics.py
	$(BIN)/python benchmarks/sim_robot.py
	$(BIN)/python benchmarks/sim.py
	$(BIN)/python benchmarks/bench.py
	$(BIN)/python benchmarks/render.py
	$(BIN)/python benchmarks/agent.py
	$(BIN)/python benchmarks/control.py
	$(BIN)/python benchmarks/code_shape.py
	$(BIN)/python benchmarks/cli.py

# A local Prefect server (127.0.0.1, state in .prefect/) serving both deployments.
serve: $(STAMP)
	$(BIN)/python -m homeloop.flows.local start

stop:
	@if [ -x $(BIN)/python ]; then $(BIN)/python -m homeloop.flows.local stop; fi

clean:
	rm -rf outputs .pytest_cache
