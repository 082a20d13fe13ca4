"""The multilingual model (TAISCE_EMBEDDINGS=multilingual, multilingual-e5-small) over
real HTTP: a question in another language is ranked by meaning, so the fact it asks
about comes back first and the entity's unrelated facts do not (the English model
returns them all, unranked); names near in meaning are found and proposed with the
model's own floors; what a request stores is recallable when it returns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from taisce.adapters.embedders.multilingual_e5 import E5_FLOORS
from tests.languages import FACTS, QUESTIONS, statements
from tests.server import LocalServer, start_server, wait_for_worker


@pytest.fixture(scope="module")
def multilingual(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    server: LocalServer = start_server(
        Path(tmp_path_factory.mktemp("multilingual")), {"TAISCE_EMBEDDINGS": "multilingual"}
    )
    with server.client(server.new_credential("multilingual")) as http:
        assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
        wait_for_worker(http, 120)
        yield http
    server.stop()


def recall(http: httpx.Client, question: str) -> list[str]:
    r = http.post(
        "/v1/recalls", json={"question": question, "surfaces": ["facts"], "explain": True}
    )
    assert r.status_code == 200, r.text
    assert r.json()["degraded"] == []
    return statements(r.json())


@pytest.mark.parametrize(("question", "statement"), QUESTIONS)
def test_a_question_in_any_language_gets_the_fact_it_asks_about_first(
    multilingual: httpx.Client, question: str, statement: str
) -> None:
    assert recall(multilingual, question)[0] == statement


def test_facts_that_do_not_bear_on_the_question_are_left_out(multilingual: httpx.Client) -> None:
    # The English model cannot read the question, so it returns Picard's five facts;
    # this one ranks them and keeps what bears on it.
    found = recall(multilingual, "Que commande Jean-Luc Picard ?")
    assert found[0] == "Jean-Luc Picard commands the USS Enterprise"
    assert "Jean-Luc Picard studied archaeology" not in found and len(found) < 5
    found = recall(multilingual, "Welches Instrument spielt Jean-Luc Picard?")
    assert found == ["Jean-Luc Picard plays the flute"]


def test_a_fact_is_recallable_in_another_language_when_its_post_returns(
    multilingual: httpx.Client,
) -> None:
    fact = {
        "subject": "Aoife Byrne",
        "predicate": "is allergic to",
        "object": "peanuts",
        "source_role": "user",
    }
    other = {**fact, "predicate": "plays", "object": "hurling"}
    assert multilingual.post("/v1/facts", json={"facts": [fact, other]}).status_code == 201
    # No wait for the worker: the request embedded them before it answered, so the
    # model ranks them (each has a cosine), not their words.
    r = multilingual.post(
        "/v1/recalls",
        json={
            "question": "Aoife Byrne ist allergisch gegen was?",
            "surfaces": ["facts"],
            "explain": True,
        },
    )
    assert r.status_code == 200, r.text
    facts = r.json()["facts"]
    assert facts[0]["statement"] == "Aoife Byrne is allergic to peanuts"
    assert all(f["why"]["similarity"] is not None for f in facts)


def test_merge_proposals_use_the_model_s_floor(multilingual: httpx.Client) -> None:
    facts = [
        {"subject": s, "predicate": "lives in", "object": o, "source_role": "user"}
        for s, o in (("Robert Smith", "Cork"), ("Rob Smith", "Cork"), ("Dublin", "Ireland"))
    ]
    assert multilingual.post("/v1/facts", json={"facts": facts}).status_code == 201
    wait_for_worker(multilingual, 120)
    r = multilingual.get("/v1/entities/proposals")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["threshold"] == E5_FLOORS.proposal and body["degraded"] == []
    pairs = {frozenset((p["alias"], p["into"])) for p in body["proposals"]}
    assert frozenset(("Rob Smith", "Robert Smith")) in pairs
    # Unrelated names score about 0.8 with this model: none reaches its floor.
    assert all(p["similarity"] >= E5_FLOORS.proposal for p in body["proposals"])
    assert not any("Dublin" in pair for pair in pairs)
