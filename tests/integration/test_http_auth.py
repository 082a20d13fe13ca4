"""Credentials and projects over real HTTP.

Every route but GET /v1/health needs a live bearer credential, and every refusal is
the same 401. The credential alone decides the project: nothing a client sends in
headers, query or body can reach another project.
"""

from __future__ import annotations

import http.client
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from typing import Any

import pytest

from tests.server import ROOT, LocalServer

UNAUTHORIZED = {
    "error": {"code": "unauthorized", "message": "a valid bearer credential is required"}
}

FACT = {
    "subject": "Unauth Subject",
    "predicate": "works at",
    "object": "Nowhere",
    "source_role": "user",
}

# Every protected route, each with a body that would be accepted with a good credential.
ROUTES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/v1/recalls", {"question": "Where does Unauth Subject work?"}),
    ("POST", "/v1/facts", {"facts": [FACT]}),
    ("GET", "/v1/facts?subject=Unauth%20Subject", None),
    ("DELETE", "/v1/facts/some-fact", None),
    ("POST", "/v1/messages", {"messages": [{"role": "user", "content": "Unauth Subject."}]}),
    # The explorer's listings.
    ("GET", "/v1/entities?search=unauth", None),
    ("GET", "/v1/entities/neighbourhood?name=Unauth%20Subject", None),
    ("GET", "/v1/messages?role=user", None),
    ("GET", "/v1/messages/some-message", None),
]
ROUTE_IDS = [f"{m} {p.partition('?')[0]}" for m, p, _ in ROUTES]


def raw_request(
    server: LocalServer,
    method: str,
    path: str,
    authorization: str | None,
    body: dict[str, Any] | bytes | None = None,
    extra: dict[str, str] | None = None,
) -> tuple[int, str, bytes]:
    """One request with exactly this Authorization header (or none): status, type, body."""
    headers = {"Content-Type": "application/json", **(extra or {})}
    if authorization is not None:
        headers["Authorization"] = authorization
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    conn = http.client.HTTPConnection(server.url.removeprefix("http://"), timeout=30)
    try:
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        return response.status, response.getheader("content-type") or "", response.read()
    finally:
        conn.close()


def assert_unauthorized(status: int, content_type: str, body: bytes, *secrets: str) -> None:
    assert status == 401, body
    assert content_type.startswith("application/json")
    assert json.loads(body) == UNAUTHORIZED
    for secret in secrets:
        assert secret not in body.decode()


def facts_with_subject_anywhere(server: LocalServer, subject: str) -> int:
    db = sqlite3.connect(server.data_dir / "taisce.sqlite3", timeout=30)
    try:
        (count,) = db.execute("SELECT count(*) FROM facts WHERE subject = ?", (subject,)).fetchone()
    finally:
        db.close()
    return int(count)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TAISCE_")}
    return subprocess.run(
        [sys.executable, "-m", "taisce.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}"


# -- every route refuses, with one and the same answer ----------------------------------


def _bad_headers(live: str) -> list[tuple[str, str | None]]:
    return [
        ("no header", None),
        ("empty header", ""),
        ("basic scheme", "Basic dXNlcjpwYXNzd29yZA=="),
        ("basic scheme with the credential", f"Basic {live}"),
        ("token scheme", f"Token {live}"),
        ("no scheme", live),
        ("empty bearer", "Bearer "),
        ("bare bearer", "Bearer"),
        ("unknown credential", "Bearer tsk_" + "A" * 43),
        ("credential with a suffix", f"Bearer {live}x"),
        ("credential in other case", f"Bearer {live.upper()}"),
        ("credential cut short", f"Bearer {live[:-1]}"),
        ("two credentials", f"Bearer {live} {live}"),
        ("over-long credential", "Bearer " + "x" * 5000),
    ]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=ROUTE_IDS)
def test_every_protected_route_refuses_without_a_live_credential(
    server: LocalServer, method: str, path: str, body: dict[str, Any] | None
) -> None:
    live = server.new_credential(unique("auth-live"))
    for label, authorization in _bad_headers(live):
        status, content_type, answer = raw_request(server, method, path, authorization, body)
        assert status == 401, (label, answer)
        assert_unauthorized(status, content_type, answer, live)
    assert facts_with_subject_anywhere(server, "Unauth Subject") == 0


@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=ROUTE_IDS)
def test_a_bad_body_without_a_credential_is_401_not_400(
    server: LocalServer, method: str, path: str, body: dict[str, Any] | None
) -> None:
    """The credential is checked before the body: nothing is said about the body."""
    status, content_type, answer = raw_request(server, method, path, None, b"{not json")
    assert_unauthorized(status, content_type, answer)


def test_the_live_credential_is_accepted_in_the_same_forms(server: LocalServer) -> None:
    live = server.new_credential(unique("auth-forms"))
    for authorization in (f"Bearer {live}", f"bearer {live}", f"BEARER {live}"):
        status, _, answer = raw_request(
            server, "POST", "/v1/recalls", authorization, {"question": "Anyone?"}
        )
        assert status == 200, (authorization, answer)


def test_health_needs_no_credential_and_shows_nothing_but_liveness(server: LocalServer) -> None:
    live = server.new_credential(unique("auth-health"))
    for authorization in (None, "Basic xyz", "Bearer nonsense", f"Bearer {live}"):
        status, _, answer = raw_request(server, "GET", "/v1/health", authorization)
        assert status == 200, answer
        # No setting, no version, no pending work: those are status's, for a credential.
        assert json.loads(answer) == {"status": "ok"}


def test_status_tells_a_credential_its_settings_and_its_own_pending_work(
    server: LocalServer,
) -> None:
    for authorization in (None, "Bearer nonsense"):
        status, _, answer = raw_request(server, "GET", "/v1/status", authorization)
        assert status == 401, answer
    live = server.new_credential(unique("auth-status"))
    status, _, answer = raw_request(server, "GET", "/v1/status", f"Bearer {live}")
    assert status == 200, answer
    told = json.loads(answer)
    assert told["store"] == "embedded" and told["embeddings"] == "none"
    assert told["bundle_characters"] > 0 and told["max_rows"] > 0
    assert isinstance(told["work_pending"], bool) and live not in answer.decode()


def test_a_revoked_credential_is_refused_on_the_next_request(server: LocalServer) -> None:
    project = unique("auth-revoked")
    created = cli("credentials", "create", "--project", project, "--data", str(server.data_dir))
    assert created.returncode == 0, created.stderr
    lines = created.stdout.strip().splitlines()
    secret = lines[-1].strip()
    credential_id = next(word for word in lines[0].split() if word.startswith("cred_"))

    with server.client(secret) as http:  # one keep-alive connection throughout
        stored = http.post("/v1/facts", json={"facts": [{**FACT, "subject": "Revoked Person"}]})
        assert stored.status_code == 201, stored.text
        fact_id = stored.json()["facts"][0]["id"]
        assert http.post("/v1/recalls", json={"question": "Revoked Person?"}).status_code == 200

        revoked = cli("credentials", "revoke", credential_id, "--data", str(server.data_dir))
        assert revoked.returncode == 0, revoked.stderr

        for method, path, body in [
            *ROUTES,
            ("GET", "/v1/facts?subject=Revoked%20Person", None),
            ("DELETE", f"/v1/facts/{fact_id}", None),
        ]:
            r = http.request(method, path, json=body)
            assert r.status_code == 401, (method, path, r.text)
            assert r.json() == UNAUTHORIZED
            assert secret not in r.text

    # Refused, and the memory is untouched: the fact it stored is still there.
    assert facts_with_subject_anywhere(server, "Revoked Person") == 1


# -- projects are apart -------------------------------------------------------------------


def _store_memory(server: LocalServer, secret: str, tag: str) -> dict[str, str]:
    """The same entity names, ids and message ids in each project; tag marks whose."""
    with server.client(secret) as http:
        facts = [
            {
                "id": "shared-fact-1",
                "subject": "Atlas",
                "predicate": "works at",
                "object": f"{tag} Corp",
                "source_role": "user",
            },
            {
                "id": f"own-fact-{tag}",
                "subject": f"{tag} Corp",
                "predicate": "is based in",
                "object": f"{tag} City",
                "source_role": "user",
            },
            {
                "subject": "Atlas",
                "predicate": "likes",
                "object": f"{tag} tea",
                "object_kind": "value",
                "source_role": "tool",
            },
        ]
        r = http.post("/v1/facts", json={"facts": facts})
        assert r.status_code == 201, r.text
        ids = [f["id"] for f in r.json()["facts"]]
        m = http.post(
            "/v1/messages",
            json={
                "messages": [
                    {"id": "shared-msg-1", "role": "user", "content": f"Atlas works at {tag} Corp."}
                ]
            },
        )
        assert m.status_code == 202, m.text
    return {"shared": ids[0], "own": ids[1], "value": ids[2]}


def _objects_seen(body: dict[str, Any]) -> set[str]:
    return {f["object"] for f in body["facts"]}


def test_two_projects_with_the_same_names_and_ids_never_see_each_other(
    server: LocalServer,
) -> None:
    a, b = unique("iso-a"), unique("iso-b")
    secret_a, secret_b = server.new_credential(a), server.new_credential(b)
    ids_a = _store_memory(server, secret_a, "Alpha")
    ids_b = _store_memory(server, secret_b, "Beta")
    assert ids_a["shared"] == ids_b["shared"] == "shared-fact-1"

    with server.client(secret_a) as http_a, server.client(secret_b) as http_b:
        for http, own, other in ((http_a, "Alpha", "Beta"), (http_b, "Beta", "Alpha")):
            recall = http.post(
                "/v1/recalls",
                json={
                    # About the name as a whole: every fact of each hop comes back.
                    "question": "What about Atlas?",
                    "hops": 2,
                    "source_roles": ["user", "tool", "assistant", "system"],
                },
            )
            assert recall.status_code == 200, recall.text
            seen = _objects_seen(recall.json())
            assert seen == {f"{own} Corp", f"{own} City", f"{own} tea"}
            assert other not in recall.text

            listed = http.get("/v1/facts", params={"subject": "Atlas"})
            assert listed.status_code == 200
            assert _objects_seen(listed.json()) == {f"{own} Corp", f"{own} tea"}
            assert other not in listed.text

            # The other project's entity is unknown here.
            assert http.get("/v1/facts", params={"subject": f"{other} Corp"}).json() == {
                "facts": [],
                "next_cursor": None,
            }
            elsewhere = http.post(
                "/v1/recalls",
                json={"question": f"Where is {other} Corp?", "source_roles": ["user", "tool"]},
            )
            assert elsewhere.json()["facts"] == []

        # B cannot delete A's own fact: 404, and A still has it.
        r = http_b.delete(f"/v1/facts/{ids_a['own']}")
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "not_found"
        r = http_b.delete(f"/v1/facts/{ids_a['value']}")
        assert r.status_code == 404
        assert _objects_seen(http_a.get("/v1/facts", params={"subject": "Alpha Corp"}).json()) == {
            "Alpha City"
        }

        # The shared id: B deletes its own fact only.
        assert http_b.delete("/v1/facts/shared-fact-1").status_code == 204
        assert http_b.delete("/v1/facts/shared-fact-1").status_code == 404
        assert "Beta Corp" not in _objects_seen(
            http_b.get("/v1/facts", params={"subject": "Atlas"}).json()
        )
        assert "Alpha Corp" in _objects_seen(
            http_a.get("/v1/facts", params={"subject": "Atlas"}).json()
        )

    # The same message id is one message in each project, each with its own text.
    db = sqlite3.connect(server.data_dir / "taisce.sqlite3", timeout=30)
    try:
        rows = dict(
            db.execute(
                "SELECT project, content FROM messages WHERE id = 'shared-msg-1' "
                "AND project IN (?, ?)",
                (a, b),
            ).fetchall()
        )
    finally:
        db.close()
    assert rows == {a: "Atlas works at Alpha Corp.", b: "Atlas works at Beta Corp."}


@pytest.mark.parametrize(
    "header",
    ["x-project", "X-Taisce-Project", "project", "x-amzn-project"],
)
def test_a_header_cannot_choose_the_project(server: LocalServer, header: str) -> None:
    a, b = unique("hdr-a"), unique("hdr-b")
    secret_a, secret_b = server.new_credential(a), server.new_credential(b)
    _store_memory(server, secret_b, "Beta")
    with server.client(secret_a) as http:
        extra = {header: b}
        recall = http.post(
            "/v1/recalls",
            json={"question": "Where does Atlas work?", "hops": 2},
            headers=extra,
        )
        assert recall.status_code == 200, recall.text
        assert recall.json()["facts"] == []
        listed = http.get("/v1/facts", params={"subject": "Atlas", "project": b}, headers=extra)
        assert listed.status_code == 200
        assert listed.json() == {"facts": [], "next_cursor": None}
        r = http.delete("/v1/facts/own-fact-Beta", headers=extra)
        assert r.status_code == 404
        stored = http.post(
            "/v1/facts",
            json={"facts": [{**FACT, "subject": "Header Person"}]},
            headers=extra,
        )
        assert stored.status_code == 201
    with server.client(secret_b) as http_b:
        # Nothing A did landed in B, and B's fact survived A's delete.
        listed_b = http_b.get("/v1/facts", params={"subject": "Header Person"}).json()
        assert listed_b == {"facts": [], "next_cursor": None}
        assert len(http_b.get("/v1/facts", params={"subject": "Beta Corp"}).json()["facts"]) == 1
    with server.client(secret_a) as http_a:
        assert (
            len(http_a.get("/v1/facts", params={"subject": "Header Person"}).json()["facts"]) == 1
        )


def test_a_body_cannot_choose_the_project(server: LocalServer) -> None:
    a, b = unique("body-a"), unique("body-b")
    secret_a = server.new_credential(a)
    server.new_credential(b)
    with server.client(secret_a) as http:
        r = http.post("/v1/recalls", json={"question": "Where does Atlas work?", "project": b})
        assert r.status_code == 400
        assert r.json() == {
            "error": {
                "code": "invalid_recall_controls",
                "message": r.json()["error"]["message"],
                "control": "project",
            }
        }
        for body in (
            {"facts": [{**FACT, "subject": "Body Person"}], "project": b},
            {"facts": [{**FACT, "subject": "Body Person", "project": b}]},
        ):
            r = http.post("/v1/facts", json=body)
            assert r.status_code == 400, r.text
            assert r.json()["error"]["code"] == "invalid_request"
        for body in (
            {"messages": [{"role": "user", "content": "Body Person."}], "project": b},
            {"messages": [{"role": "user", "content": "Body Person.", "project": b}]},
        ):
            r = http.post("/v1/messages", json=body)
            assert r.status_code == 400, r.text
            assert r.json()["error"]["code"] == "invalid_request"
    assert facts_with_subject_anywhere(server, "Body Person") == 0
