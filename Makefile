# Taisce: `make run` starts the local server with the demo; `make test` runs every check.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DATA ?= data
HOST ?= 127.0.0.1
PORT ?= 8080

# Every target lets Python cache each module's bytecode (__pycache__, ignored by git) the
# first time it imports it. With PYTHONDONTWRITEBYTECODE set (some CI images and
# sandboxes set it), every process would compile each module it imports from source
# again: each server a test starts, each CLI call, each moto server. On a fresh clone a
# server's imports took 2.7 s uncached and 1.5 s cached.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install run test test-ts lint audit browser screenshots openapi bench bench-quick bench-quality bench-extraction bench-erasure bench-secure-delete bench-load bench-load-quick bench-recall-speed bench-fact-replay bench-passage-replay bench-context-replay bench-recall-ab bench-users bench-fairness bench-erasure-repeats bench-languages bench-model-floors bench-miss-ranks clean sam-install sam-validate sam cold-start

# Two steps, each with its stamp: .venv/.runtime is what `make run` needs (the two
# packages, editable, with their runtime dependencies at the pinned versions, no AWS SDK
# and no tools); .venv/.dev adds the tools and the AWS SDKs (`make install`, which every
# other target uses). docs/packages.md has both sizes.
# uv installs the pinned packages (the versions pip would pick: the pins and the ranges
# are the same files) in seconds where pip takes minutes; pip, which every venv has,
# installs uv itself at this version. uv reads its own settings, not pip's: behind a
# package mirror, set UV_DEFAULT_INDEX (docs/packages.md).
UV_PIN := uv==0.13.8
BOOTSTRAP_UV = $(1)/bin/python -m pip install -q --disable-pip-version-check $(UV_PIN)
UV_INSTALL = $(1)/bin/uv pip install -q --python $(1)/bin/python
INSTALL := $(call UV_INSTALL,$(VENV))
PINNED := layers/core/requirements.txt layers/local-model/requirements.txt requirements-local.txt

install: $(VENV)/.dev

# clients/python (the Python client and MCP server) is a package of its own: not in the layer.
$(VENV)/.runtime: pyproject.toml clients/python/pyproject.toml $(PINNED)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11+ is needed (set PYTHON=...)")'
	$(PYTHON) -m venv $(VENV)
	@# The server's distribution was named taisce before it was taisce-server.
	@$(BIN)/python -m pip uninstall -q -y taisce >/dev/null 2>&1 || true
	$(call BOOTSTRAP_UV,$(VENV))
	@# No bytecode compiled ahead (uv's default): Python caches the bytecode of the
	@# modules it imports when it first runs them (see PYTHONDONTWRITEBYTECODE above),
	@# rather than every file of every package being compiled (52 MB, tests too).
	$(INSTALL) $(addprefix -c ,$(PINNED)) -e . -e clients/python
	@touch $@

$(VENV)/.dev: $(VENV)/.runtime requirements-dev.txt
	$(INSTALL) $(addprefix -r ,$(PINNED)) -r requirements-dev.txt
	@touch $@

run: $(VENV)/.runtime
	$(BIN)/taisce serve --host $(HOST) --port $(PORT) --data $(DATA) --demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python .ci/complexity.py layers functions clients
	@# Types: strict on the domain, the API and the service layer ([tool.mypy]).
	$(BIN)/mypy --config-file pyproject.toml
	$(BIN)/cfn-lint template.yaml

# The deploy-readiness test translates template.yaml with the SAM CLI's translator (.venv-sam).
# `-n auto --dist loadfile`: one worker per core, each test file whole on one worker
# (its module fixtures, servers among them, start once).
test: lint audit sam-install browser test-ts
	$(BIN)/python -m pytest -n auto --dist loadfile

# The TypeScript client (clients/typescript, npm package taisce-client): its tests start a
# real `taisce serve --demo` from this venv and check the generated types are current.
test-ts: install
	cd clients/typescript && npm ci --no-audit --no-fund && npm run lint && npm run build && npm test

# Headless Chromium for the browser tests (tests/browser): Debian's package, never a
# browser downloaded by Playwright. Installing needs root (or sudo without a password);
# without them this says so and the browser tests skip with the same message.
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ -x $(CHROMIUM) ]; then echo "browser: $(CHROMIUM) is installed"; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null && echo "browser: chromium installed"; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null && echo "browser: chromium installed"; \
	else echo "browser: cannot install chromium here (not root, no sudo); the browser tests will skip"; fi

# Screenshots of each page of the memory explorer into docs/ (the demo memory).
screenshots: install browser
	$(BIN)/python -m tests.browser.screenshots

# Security checks: bandit over the code (skips justified in pyproject.toml) and
# pip-audit over the installed pins; .ci/audit_dependencies.py says plainly when the
# vulnerability service could not be reached (docs/reliability.md, "Abuse and secrets").
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
	$(BIN)/taisce bench quality --embeddings local --json bench/data/quality-results.json

# Recall p50/p95 through the gateway against the dense baseline on the LoCoMo data set
# (see docs/quality.md; skipped where absent), in one run. ARGS is passed on, e.g.
# ARGS="--answers before.json" then ARGS="--compare before.json" after a change.
bench-recall-speed: install
	$(BIN)/python -m bench.recall_speed $(ARGS)

# Step 1's path rule replayed under its variants on one store (docs/API.md, "Paths").
bench-fact-replay: install
	$(BIN)/python -m bench.fact_replay $(ARGS)

# Step 4's order of passages replayed under its variants on one store per file
# (ARGS="FILE", default the LoCoMo messages file; docs/API.md, step 4).
bench-passage-replay: install
	$(BIN)/python -m bench.passage_replay $(ARGS)

# The same with each passage's vector made with the text before it (ARGS="--load
# CAPTURE FILE", a capture of bench-passage-replay --save; docs/quality.md).
bench-context-replay: install
	$(BIN)/python -m bench.context_replay $(ARGS)

# Another revision's recall against this tree's, interleaved on one store, answers compared
# (ARGS="--base REV").
bench-recall-ab: install
	$(BIN)/python -m bench.recall_ab $(ARGS)

# Storing with extraction off and on, and the delay from store to recallable facts.
bench-extraction: install
	$(BIN)/python -m bench.extraction_bench

# Erasing an entity with 1k facts and 10k passages (embedded store; DynamoDB on moto).
# Users inside a project: one user's recall among 10,000 users vs alone, storing, erasing
# a user (embedded store; long at full scale: --users scales it down).
bench-users: install
	$(BIN)/python -m bench.users_bench

bench-erasure: install
	$(BIN)/python -m bench.erasure_bench --dynamodb

# What secure_delete and the purge after an erasure cost: before vs after, one run.
bench-secure-delete: install
	$(BIN)/python -m bench.secure_delete_bench

# -- AWS: the SAM CLI in its own venv (its pins differ from the dev venv's) --
SAM_VENV := .venv-sam
SAM := SAM_CLI_TELEMETRY=0 $(SAM_VENV)/bin/sam
# `sam build` runs pip with the runtime's Python, python3.12, which must be a real
# binary on PATH; on this kind of machine it is a pyenv shim that needs a version.
SAM_PYTHON ?= PYENV_VERSION=3.12.1

sam-install: $(SAM_VENV)/.installed

$(SAM_VENV)/.installed: requirements-sam.txt
	$(PYTHON) -m venv $(SAM_VENV)
	$(call BOOTSTRAP_UV,$(SAM_VENV))
	$(call UV_INSTALL,$(SAM_VENV)) -r requirements-sam.txt
	@touch $@

sam-validate: sam-install
	$(SAM) validate --lint

# Validate, build the layer (arm64 wheels) and functions, and print their sizes.
sam: sam-validate install
	@$(SAM_PYTHON) python3.12 -c 'import sys; print("build Python", sys.version.split()[0])' || \
		(echo "python3.12 is needed on PATH for sam build (set SAM_PYTHON=...)"; exit 1)
	$(SAM_PYTHON) $(SAM) build --build-dir .aws-sam/build
	$(BIN)/python -m bench.build_size .aws-sam/build

# Import time and peak memory of each handler in a fresh interpreter (a few minutes).
cold-start: install
	$(BIN)/python -m bench.cold_start

# Concurrent recalls and writes from several projects against taisce serve over HTTP
# (60 s loaded, 20 s saturated); fails on any error or acknowledged write not stored.
bench-load: install
	$(BIN)/python -m bench.load_bench

# Another project's recall while one project erases through four credentials (about 2 min).
bench-fairness: install
	$(BIN)/python -m bench.fairness_bench

# Erasing a name of repeated words from messages of 10,000-40,000 of them: linear in the text.
bench-erasure-repeats: install
	$(BIN)/python -m bench.erasure_repeats

# The same facts asked about in five languages, MiniLM against the multilingual model.
bench-languages: install
	$(BIN)/python -m bench.languages_bench

# Another model's cosine floors matched to MiniLM's on the development conversations.
bench-model-floors: install
	$(BIN)/python -m bench.model_floors

# Where the evidence of the questions a recall misses sits in its ranking (ARGS="FILE").
bench-miss-ranks: install
	$(BIN)/python -m bench.miss_ranks $(ARGS)

# The same in about 20 s, for CI.
bench-load-quick: install
	$(BIN)/python -m bench.load_bench --quick

clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache .ruff_cache .mypy_cache .hypothesis
