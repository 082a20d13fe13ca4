"""A server killed with SIGKILL in the middle of writes restarts with a consistent
store: every acknowledged write is there, every batch is whole or absent, no vector
outlives its passage or name, and no passage is without its vector or its mark.

The server runs the local model, so its worker is embedding and indexing while the
writes arrive; writer threads from three projects keep it busy when it is killed.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.draining import drain
from tests.server import LocalServer, start_server

LOCAL = {"TAISCE_EMBEDDINGS": "local"}
PROJECTS = 3
WRITERS_PER_PROJECT = 2
RUN_SECONDS = 2.0


@dataclass
class Batch:
    project: str
    kind: str  # "facts" or "messages"
    body: dict[str, Any]
    acknowledged: bool = False

    @property
    def ids(self) -> list[str]:
        return [item["id"] for item in self.body[self.kind]]


@dataclass
class Ledger:
    batches: list[Batch] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _body(kind: str, prefix: str, n: int) -> dict[str, Any]:
    if kind == "facts":
        return {
            "facts": [
                {
                    "id": f"{prefix}-f{n}-{i}",
                    "subject": f"Person {n % 7}",
                    # Its own content: an identical fact would be stored once, its id not.
                    "predicate": f"met in round {n} of {prefix}",
                    "object": f"Person {n % 5 + i}",
                    "source_role": "user",
                }
                for i in range(10)
            ]
        }
    return {
        "messages": [
            {
                "id": f"{prefix}-m{n}-{i}",
                "role": "user",
                "content": f"Note {n}.{i}: Person {n % 7} met Person {i} about the budget. "
                "They agreed to meet again next week. " * 3,
            }
            for i in range(5)
        ]
    }


def _writer(url: str, secret: str, project: str, prefix: str, ledger: Ledger) -> None:
    headers = {"Authorization": f"Bearer {secret}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        for n in range(10_000):
            kind = ("facts", "messages")[n % 2]
            batch = Batch(project, kind, _body(kind, prefix, n))
            with ledger.lock:
                ledger.batches.append(batch)
            try:
                reply = http.post(f"/v1/{kind}", json=batch.body)
            except httpx.HTTPError:
                return  # the server is gone: this batch's fate is unknown
            if reply.status_code not in (201, 202):
                raise AssertionError(f"{kind}: {reply.status_code} {reply.text}")
            batch.acknowledged = True


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def restarted(data_dir: Path) -> Iterator[tuple[LocalServer, Ledger, dict[str, str]]]:
    first = start_server(data_dir, LOCAL)
    drain(first)
    secrets = {f"kill-{n}": first.new_credential(f"kill-{n}") for n in range(PROJECTS)}
    # The model loads on first use; writes embed what they store (read your writes), so
    # it is loaded first, by a recall, and the writers run for all of RUN_SECONDS.
    with first.client(secrets["kill-0"]) as http:
        assert http.post("/v1/recalls", json={"question": "Who met?"}).status_code == 200
    ledger = Ledger()
    threads = [
        threading.Thread(
            target=_writer,
            args=(first.url, secret, project, f"{project}-w{w}", ledger),
            daemon=True,
        )
        for project, secret in secrets.items()
        for w in range(WRITERS_PER_PROJECT)
    ]
    for t in threads:
        t.start()
    # At least RUN_SECONDS, and until more than 10 batches are acknowledged (a loaded
    # machine may need longer), so the server dies mid-stream with writes behind it.
    started = time.monotonic()
    while time.monotonic() - started < RUN_SECONDS or (
        _acknowledged(ledger) <= 10 and time.monotonic() - started < 60
    ):
        time.sleep(0.05)
    first.process.kill()  # SIGKILL: no handler, no cleanup
    first.process.wait()
    for t in threads:
        t.join(timeout=30)
    first.stop()  # closes the test's own store handle
    second = start_server(data_dir, LOCAL)
    drain(second)
    yield second, ledger, secrets
    second.stop()


def _acknowledged(ledger: Ledger) -> int:
    with ledger.lock:
        return sum(b.acknowledged for b in ledger.batches)


def _ids(db: sqlite3.Connection, table: str, project: str) -> set[str]:
    return {r[0] for r in db.execute(f"SELECT id FROM {table} WHERE project = ?", (project,))}


def test_a_killed_server_restarts_consistent(
    restarted: tuple[LocalServer, Ledger, dict[str, str]], data_dir: Path
) -> None:
    server, ledger, secrets = restarted
    acknowledged = [b for b in ledger.batches if b.acknowledged]
    unknown = [b for b in ledger.batches if not b.acknowledged]
    assert len(acknowledged) > 10  # the writers were running when the server died
    assert unknown  # and some batch was in flight
    print(f"batches acknowledged {len(acknowledged)}, in flight {len(unknown)}")

    db = sqlite3.connect(f"file:{data_dir / 'taisce.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        stored = {(p, kind): _ids(db, kind, p) for p in secrets for kind in ("facts", "messages")}
        for batch in ledger.batches:
            present = [i in stored[(batch.project, batch.kind)] for i in batch.ids]
            if batch.acknowledged:
                assert all(present), f"an acknowledged {batch.kind} batch lost rows"
            else:
                assert all(present) or not any(present), f"a half-stored {batch.kind} batch"
        for project in secrets:
            messages = stored[(project, "messages")]
            with_passages = {
                r[0]
                for r in db.execute(
                    "SELECT DISTINCT message_id FROM passages WHERE project = ?", (project,)
                )
            }
            assert with_passages == messages  # a message and its passages go together
            passages = _ids(db, "passages", project)
            vectors = {
                r[0]
                for r in db.execute(
                    "SELECT id FROM vectors WHERE project = ? AND kind = 'passage'", (project,)
                )
            }
            marked = {
                r[0]
                for r in db.execute(
                    "SELECT id FROM pending_vectors WHERE project = ? AND kind = 'passage'",
                    (project,),
                )
            }
            assert vectors <= passages  # no orphan vector
            assert passages <= vectors | marked  # none lost: indexed or still marked
            names = {
                f"{r[0]}:{r[1]}"
                for r in db.execute(
                    "SELECT role, key FROM entity_roles WHERE project = ? AND facts > 0",
                    (project,),
                )
            }
            entity_vectors = {
                r[0]
                for r in db.execute(
                    "SELECT id FROM vectors WHERE project = ? AND kind = 'entity'", (project,)
                )
            }
            entity_marks = {
                r[0]
                for r in db.execute(
                    "SELECT id FROM pending_vectors WHERE project = ? AND kind = 'entity'",
                    (project,),
                )
            }
            assert entity_vectors <= names
            assert names <= entity_vectors | entity_marks
    finally:
        db.close()

    for project, secret in secrets.items():
        with server.client(secret) as http:
            # The batches whose answer never came are sent again: stored once.
            for batch in (b for b in unknown if b.project == project):
                assert http.post(f"/v1/{batch.kind}", json=batch.body).status_code in (201, 202)
            recalled = http.post(
                "/v1/recalls",
                json={"question": "Tell me about Person 1 and Person 2", "hops": 2},
            )
            assert recalled.status_code == 200
            assert recalled.json()["facts"]
    db = sqlite3.connect(f"file:{data_dir / 'taisce.sqlite3'}?mode=ro", uri=True, timeout=30)
    try:
        for batch in ledger.batches:
            for item_id in batch.ids:
                count = db.execute(
                    f"SELECT count(*) FROM {batch.kind} WHERE project = ? AND id = ?",
                    (batch.project, item_id),
                ).fetchone()[0]
                assert count == 1
    finally:
        db.close()

    # The restarted worker takes up the marks left behind, and passages are searched.
    project, secret = next(iter(secrets.items()))
    deadline = time.monotonic() + 120
    with server.client(secret) as http:
        while True:
            answer = http.post(
                "/v1/recalls",
                json={"question": "budget meeting next week", "surfaces": ["passages"]},
            ).json()
            if answer["passages"] and answer["degraded"] == []:
                break
            assert time.monotonic() < deadline, answer
            time.sleep(0.5)
