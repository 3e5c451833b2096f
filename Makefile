# `make demo` and `make test` work on a fresh machine: each creates .venv if needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.base: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.dev: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.base

demo: $(VENV)/.base
	$(BIN)/rankmeter demo

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(VENV)/.dev
	$(BIN)/mypy

unit: $(VENV)/.dev
	$(BIN)/python -m pytest -q

test: lint typecheck unit

bench: $(VENV)/.dev
	$(BIN)/python -m pip install -q -e '.[bench]'
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
