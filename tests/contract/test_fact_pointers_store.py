"""Facts point at their messages in recall step 4, on both stores (issue 11): the facts
nearest the question rank the messages they cite, which lifts those messages' passages.
Roles and filters apply to the pointing facts as to every signal. Store.fact_pointers,
which this reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taisce.domain import passage_ranking
from taisce.domain.ingest import FactsRequest
from taisce.domain.model import FactPointer
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

MESSAGES = [
    ("m1", "Dana: Another long day, three root canals and a cleaning before lunch."),
    ("m2", "Dana: What do you do for a living these days? Still at the bank?"),
    ("m3", "Dana: I'd love to live by the sea one day."),
    ("m4", "Dana: The weather was lovely on the walk home."),
]
JOB = {
    "subject": "Dana",
    "predicate": "works as",
    "object": "dentist",
    "statement": "Dana works as a dentist",
    "message_id": "m1",
}


@pytest.fixture
def memory(semantic_memory: Memory) -> Iterator[tuple[Memory, str]]:
    memory = semantic_memory
    project = unique("pointers")
    messages = [{"id": i, "role": "user", "content": c} for i, c in MESSAGES]
    store_embedded(memory, project, messages)
    yield memory, project


def store_facts(memory: Memory, project: str, *facts: dict[str, Any]) -> list[str]:
    ids = memory.store_facts(project, FactsRequest.model_validate({"facts": list(facts)}))
    memory.index_pending(project)
    return ids


def passages(memory: Memory, project: str, question: str, **controls: Any) -> list[dict]:
    return recalled_passages(memory, project, question, explain=True, **controls)


def test_fact_pointers_returns_the_held_facts_in_the_order_given(
    memory: tuple[Memory, str],
) -> None:
    m, project = memory
    first, second = store_facts(
        m,
        project,
        {**JOB, "source_role": "user"},
        {"subject": "Dana", "predicate": "lives in", "object": "Cork", "source_role": "tool"},
    )
    found = m.store.fact_pointers(project, [second, "fact_unknown", first, second])
    assert found == [
        FactPointer(second, "dana", "cork", "tool", None, None, None, found[0].recorded_at),
        FactPointer(first, "dana", "dentist", "user", "m1", None, None, found[1].recorded_at),
    ]
    assert all(p.recorded_at.startswith("20") for p in found)
    assert m.store.fact_pointers(unique("other"), [first]) == []
    assert m.store.delete_fact(project, first)
    assert [f.id for f in m.store.fact_pointers(project, [first, second])] == [second]


def test_a_fact_lifts_the_passage_of_the_message_it_cites(
    memory: tuple[Memory, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The four messages are stored in a row, so each but the first would also gain from
    # the one before it: this shows the pointers alone (neighbours: test_message_positions).
    monkeypatch.setattr(passage_ranking, "NEIGHBOUR", 0.0)
    # Nor the ranking by the question without "Dana", which puts m2's question about a
    # living far ahead (test_passage_topic).
    monkeypatch.setattr(passage_ranking, "TOPIC_WEIGHT", 0.0)
    m, project = memory
    question = "What is Dana's job?"
    before = passages(m, project, question, source_roles=["user", "tool"])
    assert before[0]["message_id"] != "m1"
    assert all(p["why"]["fact_rank"] is None for p in before)
    users = passages(m, project, question)
    # A tool's fact: it points only for a recall that asks for the tool's role.
    store_facts(m, project, {**JOB, "source_role": "tool"})
    assert passages(m, project, question) == users
    after = passages(m, project, question, source_roles=["user", "tool"])
    assert after[0]["message_id"] == "m1" and after[0]["why"]["fact_rank"] == 1
    assert {p["id"] for p in after} == {p["id"] for p in before}
    # The same memory and request give the same answer.
    assert passages(m, project, question, source_roles=["user", "tool"]) == after


def test_a_fact_hidden_by_a_filter_points_at_nothing(memory: tuple[Memory, str]) -> None:
    m, project = memory
    question = "What is Dana's job?"
    before = passages(m, project, question)
    # No longer valid: the default recall (facts valid now) does not see it.
    store_facts(m, project, {**JOB, "source_role": "user", "valid_to": "2020-01-01T00:00:00Z"})
    assert passages(m, project, question) == before
    assert before[0]["message_id"] != "m1"
    assert all(p["why"]["fact_rank"] is None for p in before)
