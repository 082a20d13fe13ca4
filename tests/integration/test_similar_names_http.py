"""Recall step 2 over real HTTP with the real local model (issue 11): similar names
come from the question's own name-like spans, by spelling and by meaning."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server import LocalServer, start_server, wait_for_worker

FACTS = [
    {"id": "a1", "subject": "Atlas Moran", "predicate": "works at", "object": "Acme Corp"},
    {"id": "a2", "subject": "Atlas Moran", "predicate": "lives in", "object": "Galway"},
    {"id": "r1", "subject": "Robert Smith", "predicate": "plays", "object": "chess",
     "object_kind": "value"},
    {"id": "t1", "subject": "Tobias Wren", "predicate": "uses", "object": "Linear",
     "source_role": "tool"},
]  # fmt: skip


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server: LocalServer = start_server(
        Path(tmp_path_factory.mktemp("similar")), {"TAISCE_EMBEDDINGS": "local"}
    )
    try:
        with server.client(server.new_credential("similar")) as client:
            facts = [{"source_role": "user", **f} for f in FACTS]
            assert client.post("/v1/facts", json={"facts": facts}).status_code == 201
            wait_for_worker(client, message="names were not indexed in time")
            yield client
    finally:
        server.stop()


def fact_ids(http: httpx.Client, question: str, **controls: object) -> list[str]:
    r = http.post("/v1/recalls", json={"question": question, "surfaces": ["facts"], **controls})
    assert r.status_code == 200, r.text
    assert r.json()["degraded"] == []
    return [f["id"] for f in r.json()["facts"]]


def test_a_misspelt_name_reaches_the_entity(http: httpx.Client) -> None:
    # Before: the whole question's vector was compared with the names: no facts.
    assert fact_ids(http, "Where is Atlas Moren employed?") == ["a1", "a2"]
    # Exact: step 1, which ranks the facts by what is asked; asking about the name as a
    # whole keeps them all (docs/API.md, "Recall").
    assert fact_ids(http, "What about Atlas Moran?") == ["a1", "a2"]
    assert fact_ids(http, "What does Atlsa Moran do?") == ["a1", "a2"]  # two letters swapped


def test_a_name_said_another_way_reaches_the_entity_by_meaning(http: httpx.Client) -> None:
    assert fact_ids(http, "Does Bob Smith play anything?") == ["r1"]


def test_unrelated_capitalised_words_reach_nothing(http: httpx.Client) -> None:
    for question in ("Where is Paris?", "What happened on Monday in London?", "Is Python fun?",
                     "Tell me about Atlantis", "Who is Mary Moore?"):  # fmt: skip
        assert fact_ids(http, question) == [], question


def test_a_name_only_another_role_uses_is_not_similar(http: httpx.Client) -> None:
    assert fact_ids(http, "What does Tobias Wrenn use?") == []
    assert fact_ids(http, "What does Tobias Wrenn use?", source_roles=["tool"]) == ["t1"]
