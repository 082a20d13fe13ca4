"""Any language, over real HTTP, without a model (the session's server): a question
naming an entity exactly gets that entity's facts whatever language it is asked in,
and a name in a script without spaces is found inside the question's run of text."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from tests.languages import FACTS, QUESTIONS, statements
from tests.server import LocalServer


@pytest.fixture(scope="module")
def stocked(server: LocalServer) -> Iterator[httpx.Client]:
    with server.client(server.new_credential(f"languages-{uuid.uuid4().hex[:8]}")) as http:
        assert http.post("/v1/facts", json={"facts": FACTS}).status_code == 201
        yield http


@pytest.mark.parametrize(("question", "statement"), QUESTIONS)
def test_a_named_entity_s_facts_come_back_in_any_language(
    stocked: httpx.Client, question: str, statement: str
) -> None:
    r = stocked.post("/v1/recalls", json={"question": question})
    assert r.status_code == 200, r.text
    assert statement in statements(r.json())


def test_an_english_question_is_still_ranked_by_its_words(stocked: httpx.Client) -> None:
    r = stocked.post("/v1/recalls", json={"question": "What does Jean-Luc Picard drink?"})
    assert statements(r.json()) == ["Jean-Luc Picard drinks Earl Grey tea"]
