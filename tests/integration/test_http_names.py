"""Names over real HTTP (issue 15): a name needs a letter or a digit, for facts whose
subject or object is an entity, merges and erasures; a refused name changes nothing."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.server import LocalServer

NOT_NAMES = [".", "\u0000", "-", "...", "?!", "\u200b", "_", "\u00ad", "😀", "—/—"]
MESSAGE = {"id": "m1", "role": "user", "content": "Atlas waved. Then left - quietly, ok?"}
FACT = {"subject": "Atlas", "predicate": "knows", "object": "Bo", "source_role": "user"}


def _held(server: LocalServer, project: str) -> tuple[list[Any], list[Any]]:
    with sqlite3.connect(server.data_dir / "taisce.sqlite3") as db:
        facts = db.execute("SELECT id, subject, object FROM facts WHERE project = ?", (project,))
        messages = db.execute("SELECT id, content FROM messages WHERE project = ?", (project,))
        return sorted(facts.fetchall()), sorted(messages.fetchall())


def _refused(r: httpx.Response) -> None:
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_request"
    assert "letter or digit" in r.json()["error"]["message"]


@pytest.fixture
def stocked(server: LocalServer) -> Iterator[tuple[httpx.Client, str]]:
    project = f"names-{uuid.uuid4().hex[:12]}"
    with server.client(server.new_credential(project)) as http:
        assert http.post("/v1/messages", json={"messages": [MESSAGE]}).status_code == 202
        assert http.post("/v1/facts", json={"facts": [FACT]}).status_code == 201
        yield http, project


@pytest.mark.parametrize("name", NOT_NAMES)
def test_a_name_without_a_letter_or_digit_is_refused_and_changes_nothing(
    server: LocalServer, stocked: tuple[httpx.Client, str], name: str
) -> None:
    http, project = stocked
    before = _held(server, project)
    _refused(http.post("/v1/erasures", json={"subject": name}))
    _refused(http.post("/v1/facts", json={"facts": [{**FACT, "subject": name}]}))
    _refused(http.post("/v1/facts", json={"facts": [{**FACT, "object": name}]}))
    _refused(http.post("/v1/entities/merges", json={"alias": name, "into": "Atlas"}))
    _refused(http.post("/v1/entities/merges", json={"alias": "Atlas", "into": name}))
    # A whole batch is refused when one of its facts is.
    batch = [{**FACT, "id": "ok-1"}, {**FACT, "subject": name}]
    _refused(http.post("/v1/facts", json={"facts": batch}))
    assert http.get("/v1/entities/aliases").json() == {"aliases": [], "next_cursor": None}
    assert _held(server, project) == before


def test_a_value_object_need_not_be_a_name(stocked: tuple[httpx.Client, str]) -> None:
    http, _ = stocked
    value = {**FACT, "object": "-", "object_kind": "value", "predicate": "rating"}
    assert http.post("/v1/facts", json={"facts": [value]}).status_code == 201


@pytest.mark.parametrize("name", ["X", "7", "Ω", "北京", "R2-D2", "a.b", "AT&T", "हिन्दी"])
def test_a_name_with_a_letter_or_digit_is_accepted(
    stocked: tuple[httpx.Client, str], name: str
) -> None:
    http, _ = stocked
    r = http.post("/v1/facts", json={"facts": [{**FACT, "subject": name}]})
    assert r.status_code == 201, r.text
    erased = http.post("/v1/erasures", json={"subject": name})
    if len(name) == 1:
        # A name, but erasure refuses one letter: it would match nearly every text.
        assert erased.status_code == 400, erased.text
        assert "more than one letter or digit" in erased.json()["error"]["message"]
    else:
        assert erased.status_code == 200, erased.text
