"""What a handler's cold start imports on Lambda (TAISCE_STORE=dynamodb, embeddings
off): never the embedded store's adapter, nor numpy, which its vectors use (together a
third of a handler's import time, for code a deploy never runs); and the worker, which
serves no HTTP, not the HTTP resolver. Each function's `app` is imported in a fresh
interpreter, as on a cold start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(sys.modules)))
"""

NOT_NEEDED = ("numpy", "sqlite3", "taisce.adapters.sqlite")


def _functions() -> list[str]:
    return sorted(p.parent.name for p in (ROOT / "functions").glob("*/app.py"))


def _imported(function: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAISCE_", "PYTHON"))}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "TAISCE_STORE": "dynamodb",
            "TAISCE_DYNAMODB_TABLE": "taisce",
            "TAISCE_EMBEDDINGS": "none",
            "TAISCE_REGION": "us-east-1",
            "TAISCE_WORK_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/0/work.fifo",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, f"functions.{function}.app"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2_000:]
    modules: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return modules


def test_no_handler_imports_the_embedded_store_or_numpy_on_lambda() -> None:
    functions = _functions()
    assert {"recall", "facts", "messages", "worker", "erasures"} <= set(functions)
    loaded = {f: _imported(f) for f in functions}
    # The probe saw the handlers' own code (else the check below proves nothing).
    assert all("taisce.domain.model" in loaded[f] for f in functions if f != "ui"), loaded.keys()
    found = {
        f: [m for m in modules if any(m == p or m.startswith(p + ".") for p in NOT_NEEDED)]
        for f, modules in loaded.items()
    }
    assert not any(found.values()), found
    resolver = ("aws_lambda_powertools.event_handler", "taisce.api.resolver")
    assert "taisce.api.wiring" in loaded["worker"]
    assert not [m for m in loaded["worker"] if m.startswith(resolver)]
    assert "taisce.api.resolver" in loaded["recall"]
