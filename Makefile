.PHONY: install run test lint bench stress clean

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

install: $(STAMP)

$(STAMP): setup.cfg pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: install
	$(BIN)/memsync watch

test: install
	$(BIN)/ruff check .
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check .

bench: install
	$(BIN)/python -m bench.perf
	$(BIN)/python -m bench.retrieval

stress: install
	$(BIN)/pytest -q -m stress --run-stress

clean:
	rm -rf $(VENV) build *.egg-info
