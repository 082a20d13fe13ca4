"""The logs of a full session hold no credential and no stored text.

A real `taisce serve` (extraction on, against a local chat endpoint whose failing
answers quote the message) goes through a session: messages and facts carrying a
marker text, listings, recalls, bad requests, a merge, an erasure, a deletion, an
unknown, a revoked and a malformed credential. Everything it wrote to stdout and
stderr is then read: no credential, no extractor key and no marker may be there.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.model import Credential
from tests.openai_replay import ChatReplay
from tests.server import start_server, wait_for_worker

MARKER = f"Zqvx{uuid.uuid4().hex[:12]}"
EXTRACTOR_KEY = f"sk-test-{uuid.uuid4().hex}"


def completion(content: str) -> dict[str, Any]:
    """A chat completion whose content quotes the message: not JSON, so extraction fails."""
    return {
        "id": "chatcmpl-log",
        "object": "chat.completion",
        "created": 1764680001,
        "model": "log-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }


@pytest.fixture
def replay() -> Iterator[ChatReplay]:
    answers = [
        # Every extraction request holds the marker; the answers echo it back.
        {"match": MARKER, "response": {"status": 200, "body": completion(f"Sure! {MARKER}")}},
    ]
    chat = ChatReplay(exchanges=answers).start()
    try:
        yield chat
    finally:
        chat.stop()


def add_credential(store: SqliteStore, project: str) -> tuple[str, str]:
    secret = new_secret()
    credential = Credential(new_credential_id(), project, "logs", datetime.now(UTC).isoformat())
    store.add_credential(credential, secret_hash(secret))
    return credential.id, secret


def settle(http: httpx.Client) -> None:
    wait_for_worker(http, poll=0.05)


def session(url: str, live: str, revoked: str) -> list[int]:
    """Every kind of request, each carrying the marker somewhere; returns the statuses."""
    statuses: list[int] = []
    person = f"{MARKER} Person"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {live}"}) as http:

        def send(method: str, path: str, **kw: Any) -> httpx.Response:
            r = http.request(method, path, **kw)
            statuses.append(r.status_code)
            return r

        message = {"role": "user", "content": f"My secret is {MARKER}. I work at Acme."}
        assert send("POST", "/v1/messages", json={"messages": [message]}).status_code == 202
        fact = {
            "id": f"{MARKER}-fact",
            "subject": person,
            "predicate": "works at",
            "object": f"{MARKER} Corp",
            "quote": f"I work at {MARKER} Corp",
            "context": f"said about {MARKER}",
            "source_role": "user",
        }
        assert send("POST", "/v1/facts", json={"facts": [fact]}).status_code == 201
        assert send("GET", "/v1/facts", params={"subject": person}).status_code == 200
        for controls in ({}, {"subjects": [person], "source_roles": ["user", "assistant"]}):
            body = {"question": f"Where does {person} work?", **controls}
            assert send("POST", "/v1/recalls", json=body).status_code == 200
        # Bad requests whose refused values hold the marker.
        assert send("POST", "/v1/facts", content=f'{{"facts": [{MARKER}').status_code == 400
        bad_fact = {**fact, "object_kind": MARKER}
        assert send("POST", "/v1/facts", json={"facts": [bad_fact]}).status_code == 400
        assert send("POST", "/v1/recalls", json={"question": "q", MARKER: 1}).status_code == 400
        too_long = {"role": "user", "content": MARKER * 10_000}
        assert send("POST", "/v1/messages", json={"messages": [too_long]}).status_code == 400
        merge = {"alias": f"{MARKER} P.", "into": person}
        assert send("POST", "/v1/entities/merges", json=merge).status_code == 200
        assert send("GET", "/v1/entities/aliases").status_code == 200
        assert send("DELETE", f"/v1/facts/{MARKER}-fact").status_code == 204
        assert send("GET", f"/v1/{MARKER}").status_code == 404
        assert send("POST", "/v1/erasures", json={"subject": person}).status_code == 200
        settle(http)
    for header in (f"Bearer {revoked}", f"Bearer {new_secret()}", f"Basic {MARKER}"):
        r = httpx.get(f"{url}/v1/entities/aliases", headers={"Authorization": header})
        statuses.append(r.status_code)
        assert r.status_code == 401
    return statuses


def test_a_full_session_logs_no_credential_and_no_stored_text(
    tmp_path: Path, replay: ChatReplay
) -> None:
    data = tmp_path / "data"
    env = {
        "TAISCE_EXTRACTOR": "openai",
        "TAISCE_EXTRACTOR_MODEL": "log-model",
        "TAISCE_EXTRACTOR_BASE_URL": replay.base_url,
        "TAISCE_EXTRACTOR_API_KEY": EXTRACTOR_KEY,
        "TAISCE_EXTRACTOR_TIMEOUT": "5",
    }
    server = start_server(data, env)
    store = SqliteStore(data / "taisce.sqlite3")
    try:
        _, live = add_credential(store, "logs")
        revoked_id, revoked = add_credential(store, "logs")
        assert store.revoke_credential(revoked_id, datetime.now(UTC).isoformat())
        statuses = session(server.url, live, revoked)
    finally:
        store.close()
        server.process.terminate()
        out, err = server.process.communicate(timeout=30)

    # The session really ran: the model was asked (and its answers were refused), and
    # the server logged every request.
    assert replay.requests and all(
        r["headers"].get("Authorization") == f"Bearer {EXTRACTOR_KEY}" for r in replay.requests
    )
    access = [line for line in err.splitlines() if line.startswith(("GET ", "POST ", "DELETE "))]
    assert len(access) >= len(statuses), err[-3000:]
    assert "DELETE /v1/facts/{id} 204" in err
    logs = out + err
    for secret in (live, revoked, EXTRACTOR_KEY, MARKER):
        assert secret not in logs, f"{secret[:8]}... is in the server's output"
    # What Powertools wrote is JSON, one object a line.
    for line in out.splitlines()[1:]:
        if line.startswith("{"):
            json.loads(line)
