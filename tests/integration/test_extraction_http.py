"""Extraction end to end: `taisce serve` with TAISCE_EXTRACTOR=openai pointed at a local
endpoint replaying recorded answers (tests/openai_replay.py), messages stored over HTTP,
facts extracted by the server's worker and recalled (on the embedded store, and on
DynamoDB through moto's server); failures listed and replayed with the
`taisce extractions` command."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.model import Credential
from taisce.domain.names import normalize_name
from tests.moto_server import MotoDynamoDb, shared_moto
from tests.openai_replay import ChatReplay
from tests.server import ROOT, LocalServer, start_server, wait_for_worker

MODEL = "qwen2.5:7b-instruct"
USER = "Hi, I'm Sam Ortiz. I work at Acme Corp as a data engineer, and i moved to\nDublin in 2021."
ASSISTANT = "Noted. Acme Corp is headquartered in Berlin, I believe."
DOCUMENT = (
    "Acme Corp handbook, page 3.\nSam Ortiz reports to Lee Park. "
    "Lee Park leads the Data Platform team."
)
SETTLE_SECONDS = 30


def extractor_env(replay: ChatReplay) -> dict[str, str]:
    return {
        "TAISCE_EXTRACTOR": "openai",
        "TAISCE_EXTRACTOR_MODEL": MODEL,
        "TAISCE_EXTRACTOR_BASE_URL": replay.base_url,
        "TAISCE_EXTRACTOR_TIMEOUT": "5",
    }


@pytest.fixture
def replay() -> Iterator[ChatReplay]:
    with ChatReplay() as running:
        yield running


def wait_until_settled(http: httpx.Client) -> None:
    wait_for_worker(http, SETTLE_SECONDS, poll=0.05)


def facts_about(http: httpx.Client, subject: str) -> list[dict[str, Any]]:
    r = http.get("/v1/facts", params={"subject": subject})
    assert r.status_code == 200
    return r.json()["facts"]


def moto_table() -> MotoDynamoDb:
    """A table of its own: the server's worker (and status's work_pending) look at the
    whole table, and the shared one holds other tests' marks."""
    return shared_moto().table_named("taisce-extraction")


def new_credential(server: LocalServer, store: str, project: str) -> str:
    if store == "embedded":
        return server.new_credential(project)
    secret = new_secret()
    credential = Credential(new_credential_id(), project, "test", "2026-01-01T00:00:00Z")
    moto_table().store().add_credential(credential, secret_hash(secret))
    return secret


@pytest.mark.parametrize("store", ["embedded", "dynamodb"])
def test_messages_are_stored_at_once_and_their_facts_recalled_later(
    tmp_path: Path, replay: ChatReplay, store: str
) -> None:
    replay.add("conversation")
    replay.gate.clear()  # the model answers nothing until the test lets it
    env = extractor_env(replay)
    if store == "dynamodb":
        env.update(moto_table().env)
    server = start_server(tmp_path / "data", env)
    try:
        http = server.client(new_credential(server, store, f"x-{uuid.uuid4().hex[:8]}"))
        sent = [
            {"id": "m-user", "role": "user", "content": USER, "source": "chat:1"},
            {"id": "m-assistant", "role": "assistant", "content": ASSISTANT, "source": "chat:1"},
            {"id": "doc-1", "role": "tool", "content": DOCUMENT, "source": "docs/handbook.md"},
        ]
        r = http.post("/v1/messages", json={"messages": sent})
        # Stored while the model is held back: storing does not wait for extraction.
        assert r.status_code == 202
        assert r.json() == {"messages": [{"id": m["id"]} for m in sent]}
        assert facts_about(http, "Sam Ortiz") == []
        assert http.get("/v1/status").json()["work_pending"] is True

        replay.gate.set()
        wait_until_settled(http)
        contents = {m["id"]: m["content"] for m in sent}
        roles = {m["id"]: m["role"] for m in sent}

        r = http.post(
            "/v1/recalls",
            json={
                "question": "Tell me about Sam Ortiz",
                "source_roles": ["user", "assistant", "tool"],
                "hops": 2,
                "surfaces": ["facts"],
            },
        )
        assert r.status_code == 200
        recalled = r.json()["facts"]
        got = {(f["subject"], f["predicate"], f["object"], f["source_role"]) for f in recalled}
        assert got == {
            ("Sam Ortiz", "works at", "Acme Corp", "user"),
            ("Sam Ortiz", "works as", "data engineer", "user"),
            ("Sam Ortiz", "lives in", "Dublin", "user"),
            ("Acme Corp", "is headquartered in", "Berlin", "assistant"),
            # The recorded answer claims the user said these; the handbook did.
            ("Sam Ortiz", "reports to", "Lee Park", "tool"),
            ("Lee Park", "leads", "Data Platform", "tool"),
        }
        # Offsets are not counted: the budget counts exactly the listed text fields.
        counted = ("subject", "predicate", "object", "statement", "source_role", "quote", "context")
        assert r.json()["characters"] == sum(
            len(f[k]) for f in recalled for k in counted if isinstance(f[k], str)
        ) + sum(len(name) for f in recalled for name in f.get("path", []))
        for f in recalled:
            assert f["source_role"] == roles[f["message_id"]]
            content = contents[f["message_id"]]
            assert content[f["quote_start"] : f["quote_end"]] == f["quote"]
        dublin = next(f for f in recalled if f["object"] == "Dublin")
        assert dublin["quote"] == "i moved to\nDublin in 2021" and dublin["context"] == "since 2021"
        # The quote not in the message ("I love hiking at weekends") was dropped.
        assert not any(f["predicate"] == "likes" for f in recalled)

        # A user-only recall does not get the handbook's claim as the user's.
        r = http.post("/v1/recalls", json={"question": "What about Sam Ortiz?"})
        assert {f["source_role"] for f in r.json()["facts"]} == {"user"}
        assert not any(f["object"] == "Lee Park" for f in r.json()["facts"])

        # Sending the same messages again stores and extracts nothing new.
        calls = len(replay.requests)
        assert http.post("/v1/messages", json={"messages": sent}).status_code == 202
        wait_until_settled(http)
        assert len(replay.requests) == calls
        assert len(facts_about(http, "Sam Ortiz")) == 4
    finally:
        server.stop()


def cli(data: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}
    environ.update({"TAISCE_EMBEDDINGS": "none", **env})
    return subprocess.run(
        [sys.executable, "-m", "taisce.cli", "extractions", *args, "--data", str(data)],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_failed_extraction_is_listed_and_replayed(tmp_path: Path, replay: ChatReplay) -> None:
    for _ in range(3):
        replay.add("malformed-json")
    data = tmp_path / "data"
    project = f"x-{uuid.uuid4().hex[:8]}"
    server: LocalServer = start_server(data, extractor_env(replay))
    try:
        http = server.client(server.new_credential(project))
        message = {"id": "m-1", "role": "user", "content": "I work at Acme Corp, since May."}
        assert http.post("/v1/messages", json={"messages": [message]}).status_code == 202
        wait_until_settled(http)
        assert facts_about(http, "Sam Ortiz") == []
        assert len(replay.requests) == 3  # three attempts, then no more
    finally:
        server.stop()

    listed = cli(data, extractor_env(replay), "list")
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    got_project, message_id, _, attempts, error = line.split("\t")
    assert (got_project, message_id, attempts) == (project, "m-1", "3")
    assert error.startswith("the output is not valid JSON")

    assert cli(data, {}, "replay").returncode == 2  # no extractor configured

    replay.add("valid")
    replayed = cli(data, extractor_env(replay), "replay", "--project", project)
    assert replayed.returncode == 0, replayed.stderr
    assert "done: 1 extracted, 0 failed again" in replayed.stdout
    assert cli(data, extractor_env(replay), "list").stdout == ""
    store = SqliteStore(data / "taisce.sqlite3")
    try:
        (f,) = store.facts_with_subject(project, normalize_name("Sam Ortiz"))
        assert (f.quote, f.quote_start, f.quote_end, f.source_role) == (
            "I work at Acme Corp",
            0,
            19,
            "user",
        )
    finally:
        store.close()


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"TAISCE_EXTRACTOR": "gpt"}, "TAISCE_EXTRACTOR:"),
        (
            {"TAISCE_EXTRACTOR": "openai", "TAISCE_EXTRACTOR_BASE_URL": "http://x/v1"},
            "TAISCE_EXTRACTOR_MODEL",
        ),
        (
            {"TAISCE_EXTRACTOR": "openai", "TAISCE_EXTRACTOR_MODEL": "m"},
            "TAISCE_EXTRACTOR_BASE_URL",
        ),
        (
            {
                "TAISCE_EXTRACTOR": "openai",
                "TAISCE_EXTRACTOR_MODEL": "m",
                "TAISCE_EXTRACTOR_BASE_URL": "localhost",
            },
            "TAISCE_EXTRACTOR_BASE_URL",
        ),
        (
            {
                "TAISCE_EXTRACTOR": "bedrock",
                "TAISCE_EXTRACTOR_MODEL": "m",
                "TAISCE_EXTRACTOR_TIMEOUT": "0",
            },
            "TAISCE_EXTRACTOR_TIMEOUT",
        ),
    ],
)
def test_an_invalid_extractor_setting_stops_the_server(
    tmp_path: Path, env: dict[str, str], variable: str
) -> None:
    with pytest.raises(RuntimeError) as caught:
        start_server(tmp_path / "data", env).stop()
    assert variable in str(caught.value)
