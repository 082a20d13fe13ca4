# Taisce: `make run` starts the local server with the demo; `make test` runs every check.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= data
HOST ?= 127.0.0.1
PORT ?= 8080

.PHONY: install run test lint bench bench-quick bench-quality bench-erasure clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml layers/core/requirements.txt requirements-dev.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -r layers/core/requirements.txt -r requirements-dev.txt
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps -e .
	@touch $@

run: install
	$(BIN)/taisce serve --host $(HOST) --port $(PORT) --data $(DATA) --demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/cfn-lint template.yaml

test: lint
	$(BIN)/python -m pytest

bench: install
	$(BIN)/python -m bench.recall_bench

bench-quick: install
	$(BIN)/python -m bench.recall_bench --quick

# Evidence recall against BM25, dense, hybrid and recency baselines (a few minutes).
bench-quality: install
	$(BIN)/taisce bench quality bench/data/dev.json --embeddings local --json bench/data/quality-results.json

# Erasing an entity with 1k facts and 10k passages (embedded store; DynamoDB on moto).
bench-erasure: install
	$(BIN)/python -m bench.erasure_bench --dynamodb

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
