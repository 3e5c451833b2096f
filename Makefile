# `make demo` and `make test` work on a fresh machine: each creates .venv if needed.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The editable install compiles the optional C extension in place (setup.py): a change to its
# source reinstalls, so the tests never run an old build.
# The dev and bench installs take the exact versions CI pins (ci-constraints.txt).
CONSTRAINTS := ci-constraints.txt
INSTALLED_FROM := pyproject.toml setup.py src/rankmeter/data/_native.c $(CONSTRAINTS)

$(VENV)/.base: $(BIN)/python $(INSTALLED_FROM)
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.dev: $(BIN)/python $(INSTALLED_FROM)
	$(BIN)/python -m pip install -q -c $(CONSTRAINTS) -e '.[dev]'
	touch $@ $(VENV)/.base

$(VENV)/.bench: $(BIN)/python $(INSTALLED_FROM)
	$(BIN)/python -m pip install -q -c $(CONSTRAINTS) -e '.[bench]'
	touch $@ $(VENV)/.base

demo: $(VENV)/.base
	$(BIN)/rankmeter demo

LINTED := $(wildcard src tests benchmarks scripts)

lint: $(VENV)/.dev
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)

typecheck: $(VENV)/.dev
	$(BIN)/mypy

unit: $(VENV)/.dev
	$(BIN)/python -m pytest -q

test: lint typecheck unit

# Whole-process timings of rankmeter and its peers, then where rankmeter's time goes and its
# hashing against Arrow's hash kernels, then qrels of one judgment per query read against runs
# of as many lines (1M and 10M lines), then `rankmeter ab` on a 10M-impression log on DuckDB and
# Spark, then evaluation on Spark against the in-process engine (the same numbers; 1M to 50M
# lines on local[1] and local[2]: hours on 2 cores); each writes its part of
# benchmarks/RESULTS.md. Quick look:
#   make bench BENCH_ARGS='--scale 0.01 --repeat 1' PROFILE_ARGS='--scale 0.01' \
#       HASH_ARGS='--scale 0.01 --repeat 1' QRELS_ARGS='--lines 1000000 --repeat 1' \
#       ONLINE_ARGS='--impressions 200000' SPARK_EVAL_ARGS='--scale 0.01 --rows 100000 1000000'
QRELS_ARGS ?=
ONLINE_ARGS ?=
SPARK_EVAL_ARGS ?=
BENCH_ARGS ?=
PROFILE_ARGS ?=
HASH_ARGS ?=
bench: $(VENV)/.bench
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)
	$(BIN)/python benchmarks/compare_bench.py $(COMPARE_ARGS)
	$(BIN)/python benchmarks/stage_profile.py $(PROFILE_ARGS)
	$(BIN)/python benchmarks/hash_bench.py $(HASH_ARGS)
	$(BIN)/python benchmarks/qrels_bench.py $(QRELS_ARGS)
	$(BIN)/python benchmarks/online_bench.py $(ONLINE_ARGS)
	$(BIN)/python benchmarks/spark_eval_bench.py $(SPARK_EVAL_ARGS)


clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
	rm -f src/rankmeter/data/_native*.so src/rankmeter/data/_native*.pyd
