# Taisce: `make run` starts the local server with the demo; `make test` runs every check.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= data
HOST ?= 127.0.0.1
PORT ?= 8080

.PHONY: install run test lint audit openapi bench bench-quick bench-quality bench-extraction bench-erasure clean

install: $(VENV)/.installed

# clients/python (the Python client and MCP server) is a package of its own: not in the layer.
$(VENV)/.installed: pyproject.toml layers/core/requirements.txt requirements-dev.txt clients/python/pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -r layers/core/requirements.txt -r requirements-dev.txt
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps -e .
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps -e clients/python
	@touch $@

run: install
	$(BIN)/taisce serve --host $(HOST) --port $(PORT) --data $(DATA) --demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/cfn-lint template.yaml

test: lint audit
	$(BIN)/python -m pytest

# Security checks: bandit over the code (skips justified in pyproject.toml) and
# pip-audit over the installed pins; .ci/audit_dependencies.py says plainly when the
# vulnerability service could not be reached (README, "Abuse and secrets").
audit: install
	$(BIN)/bandit -q -c pyproject.toml -r layers functions clients
	$(BIN)/python .ci/audit_dependencies.py $(BIN)/pip-audit

# Rewrite the committed OpenAPI description (docs/openapi.json) from the code and template.yaml.
openapi: install
	$(BIN)/python -m taisce.api.openapi --template template.yaml

bench: install
	$(BIN)/python -m bench.recall_bench

bench-quick: install
	$(BIN)/python -m bench.recall_bench --quick

# Evidence recall against BM25, dense, hybrid and recency baselines (a few minutes).
bench-quality: install
	$(BIN)/taisce bench quality bench/data/dev.json --embeddings local --json bench/data/quality-results.json

# Storing with extraction off and on, and the delay from store to recallable facts.
bench-extraction: install
	$(BIN)/python -m bench.extraction_bench

# Erasing an entity with 1k facts and 10k passages (embedded store; DynamoDB on moto).
bench-erasure: install
	$(BIN)/python -m bench.erasure_bench --dynamodb

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
