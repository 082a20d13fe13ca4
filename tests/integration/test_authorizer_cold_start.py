"""The authorizer's cold start: on Lambda (TAISCE_STORE=dynamodb) it answers a real
request against DynamoDB (moto's server) having loaded only what one GetItem needs:
not the HTTP resolver (Powertools' event handler), not pydantic's settings, not the
wiring that builds the embedding model's, extractor's and vector index's clients.

The handler runs in a fresh interpreter, as on a cold start, with every setting a
deploy with Bedrock embeddings and extraction gives the functions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from functions.authorizer import app as authorizer
from taisce.credentials import new_secret, secret_hash
from taisce.domain.model import Credential
from taisce.settings import PREFIX, Settings
from tests.moto_server import shared_moto

ROOT = Path(__file__).resolve().parents[2]

# Runs in the fresh interpreter: argv[1] the bearer credential. Prints the answer and
# every module loaded by the import and the first request.
_PROBE = """
import json, sys
import app
answer = app.lambda_handler({"headers": {"Authorization": "Bearer " + sys.argv[1]}}, None)
print(json.dumps({"answer": answer, "modules": sorted(sys.modules)}))
"""

# Packages (and taisce modules) a credential lookup never needs.
NOT_NEEDED = (
    "aws_lambda_powertools",
    "pydantic",
    "pydantic_settings",
    "opensearchpy",
    "numpy",
    "taisce.api",
    "taisce.settings",
    "taisce.service",
    "taisce.adapters.opensearch",
    "taisce.adapters.embedders",
    "taisce.adapters.extractors",
)


def _loaded(prefix: str, modules: list[str]) -> list[str]:
    return [m for m in modules if m == prefix or m.startswith(prefix + ".")]


def test_a_cold_authorizer_answers_from_the_table_with_only_what_a_lookup_needs() -> None:
    moto = shared_moto()
    store = moto.store()
    secret = new_secret()
    credential = Credential(
        "cred_coldstart01", "coldstart", None, "2026-12-01T00:00:00Z", kind="user", user="ana"
    )
    store.add_credential(credential, secret_hash(secret))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TAISCE_", "PYTHON"))}
    env.update(moto.env)
    env.update(
        {
            "PYTHONPATH": str(ROOT / "functions" / "authorizer"),
            "TAISCE_EMBEDDINGS": "bedrock",
            "TAISCE_EXTRACTOR": "bedrock",
            "TAISCE_EXTRACTOR_MODEL": "anthropic.claude-3-haiku-20240307-v1:0",
            "TAISCE_REGION": "us-east-1",
            "TAISCE_OPENSEARCH_ENDPOINT": "https://collection-id.us-east-1.aoss.amazonaws.com",
        }
    )
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, secret],
        env=env,
        cwd=ROOT / "functions" / "authorizer",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    context = {"project": "coldstart", "kind": "user", "user": "ana"}
    assert found["answer"] == {"isAuthorized": True, "context": context}
    # Its use is recorded (the first in a minute is: one UpdateItem).
    used = store.credential_for(secret_hash(secret))
    assert used is not None and used.last_used_at is not None
    loaded = {name: _loaded(name, found["modules"]) for name in NOT_NEEDED}
    assert {name: mods for name, mods in loaded.items() if mods} == {}


def test_the_settings_the_authorizer_reads_by_name_are_the_settings_own() -> None:
    fields = Settings.model_fields
    assert authorizer.STORE == PREFIX + "STORE" and "store" in fields
    assert authorizer.TABLE == PREFIX + "DYNAMODB_TABLE"
    assert authorizer.ENDPOINT == PREFIX + "DYNAMODB_ENDPOINT" and "dynamodb_endpoint" in fields
    assert fields["dynamodb_table"].default == authorizer.DEFAULT_TABLE
