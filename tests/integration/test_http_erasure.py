"""POST /v1/erasures over real HTTP: errors, idempotence, the audit listing, and with the
local embedding model on, vectors, reports and passages after the worker has run."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.domain.names import candidate_spans
from tests.server import ROOT, LocalServer, start_server, wait_for_worker

ROLES = ["user", "assistant", "system", "tool"]
ZERO = {"facts": 0, "entities": 0, "messages": 0, "passages": 0, "reports": 0}

MESSAGES = [
    {
        "id": "m1",
        "role": "user",
        "source": "chat:1",
        "content": "Atlas started at Acme Corp last month. His manager there is Maya Okafor.\n"
        "Maya moved to Galway in the spring.",
    },
    {"id": "m2", "role": "assistant", "content": "It sounds like ATLAS prefers email."},
    {"id": "m3", "role": "tool", "source": "docs/atlas.md", "content": "Handbook of Acme."},
    {"id": "m4", "role": "user", "content": "Maya commutes to Dublin twice a week."},
]
FACTS = [
    {"subject": "Atlas", "predicate": "works at", "object": "Acme Corp", "source_role": "user"},
    {"subject": "Maya Okafor", "predicate": "manages", "object": "Atlas", "source_role": "user"},
    {"subject": "Maya Okafor", "predicate": "lives in", "object": "Galway", "source_role": "user"},
    {"subject": "Maya Okafor", "predicate": "works at", "object": "Acme Corp",
     "source_role": "user"},
    {"subject": "Atlas", "predicate": "prefers", "object": "email", "object_kind": "value",
     "source_role": "assistant"},
    {"subject": "Acme Corp", "predicate": "is based in", "object": "Dublin", "source_role": "tool",
     "quote": "Acme (where Atlas works) is in Dublin"},
]  # fmt: skip


def names_atlas(text: object) -> bool:
    return isinstance(text, str) and any(s.key == "atlas" for s in candidate_spans(text))


def texts(answer: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for f in answer["facts"]:
        found += [f[k] for k in ("subject", "predicate", "object", "statement", "quote", "context")]
        found += f.get("path", [])
    for r in answer["reports"]:
        found += [r["title"], r["summary"], *r["path"]]
    for p in answer["passages"]:
        found += [p["quote"], p["source"]]
    return [t for t in found if t]


def erase(http: httpx.Client, body: object) -> httpx.Response:
    return http.post("/v1/erasures", json=body)


# -- without a model (the session's server) ------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"subject": ""}',
        b'{"subject": "   "}',
        b'{"subject": 7}',
        b'{"subject": null}',
        b"{}",
        b'{"subject": "Atlas", "also": 1}',
        ('{"subject": "' + "x" * 501 + '"}').encode(),
    ],
)
def test_a_bad_body_is_refused_and_changes_nothing(server: LocalServer, body: bytes) -> None:
    with server.client(server.new_credential("erasure-bad")) as http:
        assert http.post("/v1/facts", json={"facts": FACTS[:1]}).status_code == 201
        r = http.post("/v1/erasures", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400, r.text
        assert r.json()["error"]["code"] == "invalid_request"
        assert r.json()["error"]["message"]
        assert len(http.get("/v1/facts", params={"subject": "atlas"}).json()["facts"]) >= 1


@pytest.mark.parametrize(
    ("subject", "rule"),
    [
        ("a", "more than one letter or digit"),
        ("s", "more than one letter or digit"),
        ("'s", "more than one letter or digit"),
        ("  É ", "more than one letter or digit"),
        ("7", "more than one letter or digit"),
        ("it", "common words"),
        ("The", "common words"),
        ("of the", "common words"),
        ("it's", "common words"),
        ("der", "common words"),
        ("agus", "common words"),
        ("Le, la!", "common words"),
    ],
)
def test_a_common_word_is_refused_and_masks_nothing(
    server: LocalServer, subject: str, rule: str
) -> None:
    with server.client(server.new_credential("erasure-common")) as http:
        assert http.post("/v1/messages", json={"messages": MESSAGES}).status_code == 202
        before = http.get("/v1/messages").json()["messages"]
        r = erase(http, {"subject": subject})
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["code"] == "invalid_request" and rule in error["message"], error
        assert "subject" in error["message"]
        assert http.get("/v1/messages").json()["messages"] == before
        assert all("\u2588" not in m["content"] for m in before)


@pytest.mark.parametrize("subject", ["Al", "C++", "Malcolm X", "The Who", "MIT", "Atlas"])
def test_short_names_and_names_with_common_words_are_erased(
    server: LocalServer, subject: str
) -> None:
    with server.client(server.new_credential("erasure-short")) as http:
        r = erase(http, {"subject": subject})
    assert r.status_code == 200, r.text


def test_erasure_needs_a_credential(server: LocalServer) -> None:
    with server.client() as http:
        r = erase(http, {"subject": "Atlas"})
    assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized"


def test_erasure_over_http_is_idempotent_and_audited(server: LocalServer) -> None:
    project = "erasure-http"
    with server.client(server.new_credential(project)) as http:
        assert erase(http, {"subject": "Nobody"}).json()["erased"] == ZERO
        assert http.post("/v1/messages", json={"messages": MESSAGES}).status_code == 202
        assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
        first = erase(http, {"subject": "atlas"})
        assert first.status_code == 200
        assert first.json()["erased"] == {
            "facts": 4,
            "entities": 1,
            "messages": 3,
            "passages": 2,
            "reports": 0,  # none built yet (or none, without a model, on this server)
        } | {"reports": first.json()["erased"]["reports"]}
        assert erase(http, {"subject": "ATLAS"}).json()["erased"] == ZERO
        assert http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"] == []
        asked = {"question": "What about Acme Corp?", "source_roles": ROLES, "hops": 2}
        answer = http.post("/v1/recalls", json=asked).json()
        assert answer["facts"] and not [t for t in texts(answer) if names_atlas(t)]
        # Storing a fact about the name on purpose brings it back.
        again = {
            "subject": "Atlas",
            "predicate": "joined",
            "object": "Globex",
            "source_role": "user",
        }
        assert http.post("/v1/facts", json={"facts": [again]}).status_code == 201
        assert [
            f["object"] for f in http.get("/v1/facts", params={"subject": "atlas"}).json()["facts"]
        ] == ["Globex"]

    listing = subprocess.run(
        [sys.executable, "-m", "taisce.cli", "erasures", "list", "--data", str(server.data_dir),
         "--project", project],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}
        | {"TAISCE_EMBEDDINGS": "none"},
    )  # fmt: skip
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert len(lines) == 4  # a header and three erasures
    digest = hashlib.sha256(f"{project}\x00atlas".encode()).hexdigest()
    assert lines[2].split("\t")[3] == digest and lines[2].split("\t")[4] == "4"
    assert "atlas" not in listing.stdout.lower() and "nobody" not in listing.stdout.lower()


# -- with the local model: vectors, reports, passages ----------------------------------


@pytest.fixture(scope="module")
def semantic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Path]]:
    data = Path(tmp_path_factory.mktemp("erasure-semantic"))
    server: LocalServer = start_server(data, {"TAISCE_EMBEDDINGS": "local"})
    try:
        with server.client(server.new_credential("erasure")) as http:
            assert http.post("/v1/messages", json={"messages": MESSAGES}).status_code == 202
            assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
            wait_for_worker(http)
            yield http, data / "taisce.sqlite3"
    finally:
        server.stop()


def ask(http: httpx.Client, **body: object) -> dict[str, Any]:
    r = http.post("/v1/recalls", json=body)
    assert r.status_code == 200, r.text
    return r.json()


QUESTIONS = [
    "Where does Atlas work?",
    "Atlas",
    "Atlass",  # a similar name
    "Who does Maya Okafor manage?",
    "Who prefers email?",
    "Tell me about Acme Corp",
    "Who started last month?",
]


def test_with_a_model_nothing_about_it_comes_back(semantic: tuple[httpx.Client, Path]) -> None:
    http, db_path = semantic
    before = [ask(http, question=q, source_roles=ROLES, hops=2, themes=True) for q in QUESTIONS]
    assert any(names_atlas(t) for a in before for t in texts(a))
    assert any(
        a["reports"] and any(names_atlas(r["summary"]) for r in a["reports"]) for a in before
    )
    assert any(names_atlas(p["quote"]) for a in before for p in a["passages"])

    counts = erase(http, {"subject": "Atlas"}).json()["erased"]
    assert counts["facts"] == 4 and counts["reports"] >= 1 and counts["passages"] >= 2

    # At once (before the worker runs) and after it rebuilt the reports.
    for moment in ("now", "after the worker"):
        if moment != "now":
            wait_for_worker(http)
        for question in QUESTIONS:
            for controls in (
                {"source_roles": ROLES, "hops": 2, "themes": True},
                {"source_roles": ROLES, "surfaces": ["reports"]},
                {"source_roles": ["user"], "surfaces": ["passages", "facts"]},
                {"source_roles": ["assistant", "tool"], "hops": 1, "max_characters": 300},
            ):
                answer = ask(http, question=question, **controls)
                assert not [t for t in texts(answer) if names_atlas(t)], (moment, question)
    # The rest is still recalled, and the reports were rebuilt without him.
    rest = ask(
        http, question="Maya Okafor", source_roles=ROLES, themes=True, surfaces=["facts", "reports"]
    )
    assert {f["object"] for f in rest["facts"]} == {"Galway", "Acme Corp"}
    assert rest["reports"] and all(not names_atlas(r["summary"]) for r in rest["reports"])

    # No vector or indexed text of what was erased stays in the index.
    with sqlite3.connect(db_path) as db:
        ids = {
            (k, i) for k, i in db.execute("SELECT kind, id FROM vectors WHERE project = 'erasure'")
        }
        text = [t for (t,) in db.execute("SELECT text FROM vector_text")]
        left = db.execute("SELECT count(*) FROM erased_vectors").fetchone()[0]
        tombstones = [h for (h,) in db.execute("SELECT hash FROM erased_subjects")]
    assert not {i for k, i in ids if k == "entity" and i.endswith(":atlas")}
    assert ("entity", "user:maya okafor") in ids
    assert not [t for t in text if names_atlas(t)]
    assert left == 0
    assert "atlas" not in " ".join(tombstones)


# -- on DynamoDB (moto's server): accepted, then completed by the worker ---------------


@pytest.fixture(scope="module")
def on_dynamodb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalServer, Any]]:
    from tests.moto_server import shared_moto

    table = shared_moto().table_named("taisce-erasure-http")
    server = start_server(Path(tmp_path_factory.mktemp("erasure-dynamodb")), table.env)
    try:
        yield server, table
    finally:
        server.stop()


def dynamodb_client(on_dynamodb: tuple[LocalServer, Any], project: str) -> httpx.Client:
    from taisce.credentials import new_secret, secret_hash
    from tests.contract.factories import credential

    server, table = on_dynamodb
    secret = new_secret()
    table.store().add_credential(credential(project), secret_hash(secret))
    return server.client(secret)


def test_on_dynamodb_an_erasure_is_accepted_then_done_by_the_worker(
    on_dynamodb: tuple[LocalServer, Any],
) -> None:
    project = f"erasure-ddb-{os.urandom(6).hex()}"
    with dynamodb_client(on_dynamodb, project) as http:
        assert http.post("/v1/messages", json={"messages": MESSAGES}).status_code == 202
        assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
        r = erase(http, {"subject": "atlas"})
        assert r.status_code == 202, r.text
        accepted = r.json()
        assert accepted["status"] == "pending" and accepted["erased"] == ZERO
        assert accepted["status_url"] == f"/v1/erasures/{accepted['id']}"
        deadline = time.monotonic() + 60
        while (status := http.get(accepted["status_url"])).json()["status"] == "pending":
            assert status.status_code == 200
            # Whatever the worker has done so far, recall returns nothing about it.
            asked = {"question": "Where does Atlas work?", "source_roles": ROLES, "hops": 2}
            assert not [t for t in texts(http.post("/v1/recalls", json=asked).json())
                        if names_atlas(t)]  # fmt: skip
            assert time.monotonic() < deadline, "the worker did not finish the erasure"
            time.sleep(0.1)
        done = status.json()
        assert done["status"] == "done" and done["finished_at"] >= done["requested_at"]
        assert done["erased"] | {"reports": 0} == {
            "facts": 4, "entities": 1, "messages": 3, "passages": 2, "reports": 0
        }  # fmt: skip
        assert http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"] == []
        # Erasing again: a new erasure, done with zero counts.
        again = erase(http, {"subject": "ATLAS"})
        assert again.status_code == 202
        wait_for_worker(http)
        assert http.get(again.json()["status_url"]).json()["erased"] == ZERO
        # Bad input: the API's shape, nothing recorded.
        bad = erase(http, {"subject": "   "})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"
        missing = http.get("/v1/erasures/era_" + "f" * 32)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    _, table = on_dynamodb
    assert table.store().pending_erasures(project) == []
    assert len(table.store().erasures(project)) == 2


def test_on_dynamodb_the_python_client_reads_a_pending_erasure_until_done(
    on_dynamodb: tuple[LocalServer, Any],
) -> None:
    """`erase` answers an Erasure: pending at once, or done when given time to wait
    (the client reads its status until the worker is done)."""
    from taisce_client import Client, ErasedCounts, Erasure

    project = f"erasure-client-{os.urandom(6).hex()}"
    with dynamodb_client(on_dynamodb, project) as http:
        assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
        secret = http.headers["authorization"].removeprefix("Bearer ")
    with Client(on_dynamodb[0].url, secret) as client:
        pending = client.erase("Atlas")
        assert isinstance(pending, Erasure) and pending.status == "pending"
        assert pending.erased == ErasedCounts() and pending.finished_at is None
        done = client.erase("Maya Okafor", wait=60)
        assert done.status == "done" and done.finished_at is not None, done
        assert done.erased.facts >= 1
        assert client.erasure(done.id) == done


def test_the_embedded_store_answers_the_same_shape_done(server: LocalServer) -> None:
    with server.client(server.new_credential("erasure-shape")) as http:
        assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
        r = erase(http, {"subject": "Maya Okafor"})
        assert r.status_code == 200
        done = r.json()
        assert done["status"] == "done" and done["erased"]["facts"] == 3
        assert http.get(done["status_url"]).json() == done
        other = server.new_credential("erasure-shape-other")
    with server.client(other) as http:
        assert http.get(done["status_url"]).status_code == 404


def test_on_dynamodb_the_preview_and_a_spared_longer_name(
    on_dynamodb: tuple[LocalServer, Any],
) -> None:
    """The pending erasure keeps the names it spares, for the worker's paged plan and
    for what the reads hide meanwhile (tests/integration/test_http_erasure_preview.py
    has the rules on the embedded store)."""
    from tests.integration.test_http_erasure_preview import FACTS as DANA_FACTS
    from tests.integration.test_http_erasure_preview import MESSAGES as DANA_MESSAGES

    project = f"erasure-ddb-dana-{os.urandom(6).hex()}"
    with dynamodb_client(on_dynamodb, project) as http:
        assert http.post("/v1/messages", json={"messages": DANA_MESSAGES}).status_code == 202
        assert http.post("/v1/facts", json={"facts": DANA_FACTS}).status_code == 201
        wait_for_worker(http)
        before = {m["id"]: m["content"] for m in http.get("/v1/messages").json()["messages"]}
        preview = http.post("/v1/erasures", json={"subject": "Dana", "dry_run": True}).json()
        assert preview["would_erase"]["facts"] == 2 and preview["names"][1]["taken"] is False
        r = erase(http, {"subject": "Dana"})
        assert r.status_code == 202, r.text
        # While pending, the reads already show what it will leave: Dana Holdings stays.
        held = http.get("/v1/facts", params={"subject": "Dana Holdings"}).json()["facts"]
        assert [f["id"] for f in held] == ["f3", "f4"]
        wait_for_worker(http)
        done = http.get(r.json()["status_url"]).json()
        assert done["status"] == "done" and done["erased"]["facts"] == 2
        held = http.get("/v1/facts", params={"subject": "Dana Holdings"}).json()["facts"]
        assert [f["id"] for f in held] == ["f3", "f4"]
        assert http.get("/v1/facts", params={"subject": "Dana"}).json()["facts"] == []
        after = {m["id"]: m["content"] for m in http.get("/v1/messages").json()["messages"]}
        assert [after[k] == before[k] for k in ("m1", "m2", "m3", "m4")] == [
            False, True, True, True
        ]  # fmt: skip
