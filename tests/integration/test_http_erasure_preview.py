"""Erasure that takes what was meant, over real HTTP: the preview (`dry_run`) removes
nothing and says what would go; the subject's entity goes, an entity whose name holds
it ("Dana Holdings" for "Dana") stays unless named in `also`; a subject that is no
entity and would mask much needs the preview's token."""

from __future__ import annotations

import httpx
from taisce_client import Client

from tests.server import LocalServer

MESSAGES = [
    {"id": "m1", "role": "user", "content": "Dana moved to Galway in May."},
    {"id": "m2", "role": "user", "content": "Dana Holdings opened an office in Cork."},
    {"id": "m3", "role": "user", "content": "Ann joined Dana Holdings last year."},
    {"id": "m4", "role": "user", "content": "Maya met Ann in Cork."},
]
FACTS = [
    {"id": "f1", "subject": "Dana", "predicate": "lives in", "object": "Galway",
     "source_role": "user"},
    {"id": "f2", "subject": "Dana", "predicate": "owns", "object": "Dana Holdings",
     "source_role": "user"},
    {"id": "f3", "subject": "Dana Holdings", "predicate": "is based in", "object": "Cork",
     "source_role": "user"},
    {"id": "f4", "subject": "Dana Holdings", "predicate": "employs", "object": "Ann",
     "source_role": "user"},
    {"id": "f5", "subject": "Maya", "predicate": "knows", "object": "Ann",
     "source_role": "user"},
]  # fmt: skip


def _fill(http: httpx.Client) -> None:
    assert http.post("/v1/messages", json={"messages": MESSAGES}).status_code == 202
    assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201


def _contents(http: httpx.Client) -> dict[str, str]:
    return {m["id"]: m["content"] for m in http.get("/v1/messages").json()["messages"]}


def _fact_ids(http: httpx.Client, subject: str) -> list[str]:
    return [f["id"] for f in http.get("/v1/facts", params={"subject": subject}).json()["facts"]]


def test_the_preview_removes_nothing_and_the_erasure_spares_a_longer_name(
    server: LocalServer,
) -> None:
    with server.client(server.new_credential("erasure-preview")) as http:
        _fill(http)
        before = _contents(http)
        r = http.post("/v1/erasures", json={"subject": "Dana", "dry_run": True})
        assert r.status_code == 200, r.text
        preview = r.json()
        assert preview["names"] == [
            {"key": "dana", "taken": True},
            {"key": "dana holdings", "taken": False},
        ]
        assert preview["would_erase"] == {
            "facts": 2, "entities": 1, "messages": 1, "passages": 1, "reports": 0
        }  # fmt: skip
        assert [f["id"] for f in preview["facts"]] == ["f1", "f2"]
        assert [p["quote"] for p in preview["passages"]] == ["Dana moved to Galway in May."]
        assert preview["messages"] == 4 and preview["needs_token"] is False
        assert preview["token"]
        # Nothing removed.
        assert _contents(http) == before
        assert _fact_ids(http, "Dana") == ["f1", "f2"]

        r = http.post("/v1/erasures", json={"subject": "Dana"})
        assert r.status_code == 200, r.text
        assert r.json()["erased"] | {"reports": 0} == preview["would_erase"]
        assert _fact_ids(http, "Dana") == []
        # Dana Holdings stays, with its facts and the messages that name only it.
        assert _fact_ids(http, "Dana Holdings") == ["f3", "f4"]
        after = _contents(http)
        assert {k: after[k] for k in ("m2", "m3", "m4")} == {
            k: before[k] for k in ("m2", "m3", "m4")
        }
        assert "Dana" not in after["m1"] and len(after["m1"]) == len(before["m1"])
        keys = {e["key"] for e in http.get("/v1/entities").json()["entities"]}
        assert "dana holdings" in keys and "dana" not in keys


def test_also_takes_the_longer_name_too_and_the_python_client_sends_it(
    server: LocalServer,
) -> None:
    secret = server.new_credential("erasure-also")
    with server.client(secret) as http:
        _fill(http)
        before = _contents(http)
        # Only a name the preview lists may be named in `also`: 400, nothing changed.
        r = http.post("/v1/erasures", json={"subject": "Dana", "also": ["Maya"]})
        assert r.status_code == 400
        error = r.json()["error"]
        assert error["code"] == "invalid_request" and "also" in error["message"]
        for bad in ({"subject": "Dana", "also": "Dana Holdings"},
                    {"subject": "Dana", "dry_run": "yes"},
                    {"subject": "Dana", "also": ["."]},
                    {"subject": "Dana", "token": ""},
                    {"user": "u1", "dry_run": True}):  # fmt: skip
            r = http.post("/v1/erasures", json=bad)
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", bad
        assert _contents(http) == before
    with Client(server.url, secret) as client:
        preview = client.erase("Dana", dry_run=True, also=["Dana Holdings"])
        assert [(n.key, n.taken) for n in preview.names] == [
            ("dana", True),
            ("dana holdings", True),
        ]
        assert preview.would_erase.facts == 4
        done = client.erase("Dana", also=["Dana Holdings"])
        assert done.status == "done" and done.erased.facts == 4 and done.erased.messages == 3
    with server.client(secret) as http:
        assert _fact_ids(http, "Dana Holdings") == []
        assert _contents(http)["m4"] == before["m4"]


def test_a_subject_that_is_no_entity_and_masks_much_needs_the_preview_token(
    server: LocalServer,
) -> None:
    with server.client(server.new_credential("erasure-token")) as http:
        lines = [
            {"id": f"q{i}", "role": "user", "content": f"Note {i}: the quill was on the desk."}
            for i in range(8)
        ] + [{"id": "keep", "role": "user", "content": "Maya met Ann in Cork."}]
        assert http.post("/v1/messages", json={"messages": lines}).status_code == 202
        before = _contents(http)
        r = http.post("/v1/erasures", json={"subject": "Quill"})
        assert r.status_code == 400, r.text
        message = r.json()["error"]["message"]
        assert "no entity" in message and "8 of its 9 messages" in message
        assert "dry_run" in message and "token" in message
        assert _contents(http) == before

        preview = http.post("/v1/erasures", json={"subject": "Quill", "dry_run": True}).json()
        assert preview["needs_token"] is True and preview["would_erase"]["messages"] == 8
        other = http.post("/v1/erasures", json={"subject": "Maya", "dry_run": True}).json()
        for token in (other["token"], preview["token"][:-2] + "AA", "x" * 40):
            r = http.post("/v1/erasures", json={"subject": "Quill", "token": token})
            assert r.status_code == 400, token
        assert _contents(http) == before

        r = http.post("/v1/erasures", json={"subject": "quill", "token": preview["token"]})
        assert r.status_code == 200, r.text
        assert r.json()["erased"]["messages"] == 8
        assert _contents(http)["keep"] == before["keep"]
