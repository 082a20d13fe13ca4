"""`taisce listings backfill --project P`: a DynamoDB table written before the listing
partitions gets them (moto's server over HTTP); on the embedded store nothing to do."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from taisce.adapters.dynamodb_store import entity_list_pk
from taisce.domain.controls import Limits
from taisce.domain.memory import Memory
from tests.contract.factories import fact
from tests.moto_server import ROOT, shared_moto


def taisce(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}
    environ.update({"TAISCE_EMBEDDINGS": "none", **env})
    return subprocess.run(
        [sys.executable, "-m", "taisce.cli", *args],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_backfill_lists_what_the_table_held_before() -> None:
    moto = shared_moto()
    store = moto.store()
    project = f"backfill-{uuid.uuid4().hex[:8]}"
    store.put_facts(project, [fact("Atlas", "works at", "Acme", id="bf1")])
    store.client.delete_item(
        TableName=store.table_name,
        Key={"PK": {"S": entity_list_pk(project)}, "SK": {"S": "atlas"}},
    )
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    assert [e["key"] for e in memory.list_entities(project, None, None, None)["entities"]] == [
        "acme"
    ]
    done = taisce(
        {**moto.env, "TAISCE_STORE": "dynamodb"}, "listings", "backfill", "--project", project
    )
    assert done.returncode == 0, done.stderr
    assert "listed 2 entities and 0 messages" in done.stdout
    assert [e["key"] for e in memory.list_entities(project, None, None, None)["entities"]] == [
        "acme",
        "atlas",
    ]


def test_on_the_embedded_store_there_is_nothing_to_do(tmp_path: Path) -> None:
    done = taisce({}, "listings", "backfill", "--project", "p", "--data", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "nothing to do" in done.stdout
