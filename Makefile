# The two entry points of the README: `make demo` and `make test`. Both create the environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The agent hosts the conformance tests run for real (tests/hosts), from the npm registry, pinned.
HOSTS := .hosts
HOST_PACKAGES := @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0 @google/gemini-cli@0.61.0 \
	@github/copilot@1.0.102

.PHONY: demo test lint typecheck unit hosts schema bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# A pytest plugin a dependency registers, which this suite's many pytest starts never use.
	$(BIN)/python tools/quiet_pytest_plugins.py
	@# An editable install has no bytecode, and PYTHONDONTWRITEBYTECODE may stop Python writing
	@# it: compile once, as a regular install does, so hooks start as fast as users' will.
	$(BIN)/python -m compileall -q src
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

# Lint and the type check run beside the tests, which wait on subprocesses more than they compute.
test: $(STAMP)
	@$(MAKE) --no-print-directory -j3 lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples tools
	$(BIN)/ruff format --check src tests benchmarks examples tools

typecheck: $(STAMP)
	$(BIN)/mypy

# A host that cannot be installed here is said once; its tests are skipped, saying why.
hosts: $(HOSTS)/.installed

$(HOSTS)/.installed: Makefile
	@mkdir -p $(HOSTS)
	@npm install --prefix $(HOSTS) --no-audit --no-fund --silent $(HOST_PACKAGES) \
		&& touch $@ \
		|| echo "make: could not install $(HOST_PACKAGES); tests/hosts will be skipped" >&2

# A test file at a time to each worker. Three workers on a two-core machine: a test waiting on a
# subprocess, a server or a timeout leaves a core to the others (tests/session and tests/scan:
# 194 s with two, 170 s with three, 164 s with four, the same CPU).
unit: $(STAMP) hosts
	$(BIN)/pytest -q -n 3 --dist loadfile

# Regenerate the checked-in JSON Schema from the wire models (a test fails when they drift).
schema: $(STAMP)
	$(BIN)/donegate schema > schema/completion-claim-0.1.schema.json

# Speed goals, each measured against a baseline in the same run (see README, "Benchmarks").
bench: $(STAMP)
	$(BIN)/python benchmarks/verify_throughput.py
	$(BIN)/python benchmarks/gate_decide.py
	$(BIN)/python benchmarks/collect_overhead.py
	$(BIN)/python benchmarks/workspace_snapshot.py
	$(BIN)/python benchmarks/stop_hook.py
	$(BIN)/python benchmarks/sealed_run.py

clean:
	rm -rf $(VENV) $(HOSTS) .mypy_cache .ruff_cache .pytest_cache .hypothesis
