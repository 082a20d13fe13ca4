"""Users inside a project over real HTTP: the `user` of a body or a query, refused
when it breaks the rule (changing nothing), echoed by a recall, and what each request
sees (the shared memory and its own user's, never another user's)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server import LocalServer

BAD_USERS: list[Any] = ["", "a b", "a/b", "é", "x" * 129, 7, True, ["u"], {"u": 1}, "a#b"]
FACT = {"subject": "Atlas", "predicate": "likes", "object": "tea", "source_role": "user"}
MESSAGE = {"role": "user", "content": "Atlas likes tea."}


def _held(server: LocalServer, project: str) -> list[Any]:
    with sqlite3.connect(server.data_dir / "taisce.sqlite3") as db:
        rows = db.execute(
            "SELECT 'f', id FROM facts WHERE project LIKE ? || '%' UNION ALL "
            "SELECT 'm', id FROM messages WHERE project LIKE ? || '%'",
            (project, project),
        )
        return sorted(rows.fetchall())


@pytest.fixture
def project(server: LocalServer) -> Iterator[tuple[httpx.Client, str]]:
    name = f"users-{uuid.uuid4().hex[:12]}"
    with server.client(server.new_credential(name)) as http:
        yield http, name


def _names_user(r: httpx.Response) -> None:
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_request", error
    assert "user" in error["message"], error


@pytest.mark.parametrize("user", BAD_USERS)
def test_a_wrong_user_is_refused_naming_it_and_changes_nothing(
    server: LocalServer, project: tuple[httpx.Client, str], user: Any
) -> None:
    http, name = project
    before = _held(server, name)
    _names_user(http.post("/v1/facts", json={"facts": [FACT], "user": user}))
    _names_user(http.post("/v1/messages", json={"messages": [MESSAGE], "user": user}))
    _names_user(http.post("/v1/recalls", json={"question": "Atlas?", "user": user}))
    _names_user(http.post("/v1/erasures", json={"subject": "Atlas", "user": user}))
    _names_user(http.post("/v1/entities/merges", json={"alias": "A", "into": "B", "user": user}))
    if isinstance(user, str):
        for path in ("/v1/facts?subject=Atlas", "/v1/messages", "/v1/entities"):
            _names_user(http.get(path, params={"user": user}))
        _names_user(http.delete("/v1/facts/f1", params={"user": user}))
    assert _held(server, name) == before


def test_a_recall_echoes_the_user_only_when_sent(project: tuple[httpx.Client, str]) -> None:
    http, _ = project
    sent = http.post("/v1/recalls", json={"question": "Atlas?", "user": "u-1@x.io"})
    assert sent.status_code == 200, sent.text
    assert sent.json()["user"] == "u-1@x.io"
    unsent = http.post("/v1/recalls", json={"question": "Atlas?"})
    assert "user" not in unsent.json()
    assert set(unsent.json()) | {"user"} == set(sent.json())


def test_an_erasure_names_a_subject_or_a_user(project: tuple[httpx.Client, str]) -> None:
    http, _ = project
    for body in ({}, {"subject": None}, {"user": None}):
        r = http.post("/v1/erasures", json=body)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["message"] == "subject (a name) or user is required"


def test_a_user_is_a_field_of_the_request_never_of_an_item(
    project: tuple[httpx.Client, str],
) -> None:
    http, _ = project
    r = http.post("/v1/facts", json={"facts": [{**FACT, "user": "u1"}]})
    assert r.status_code == 400 and "unknown field 'user' in facts[0]" in r.text
    r = http.post("/v1/messages", json={"messages": [{**MESSAGE, "user": "u1"}]})
    assert r.status_code == 400 and "unknown field 'user' in messages[0]" in r.text
