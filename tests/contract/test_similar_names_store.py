"""Recall step 2 on both stores: a misspelt name, a part of the name, or the name in a
case form, in the question reaches the entity, by the same domain code
(domain/similar_names.py) over each store's listing."""

from __future__ import annotations

from typing import Any

from taisce.api import bodies
from taisce.domain.controls import RecallRequest
from taisce.domain.ingest import FactsRequest
from taisce.service.memory import Memory
from tests.contract.factories import unique


def test_a_misspelt_name_reaches_the_entity(store: Any, semantic_memory: Memory) -> None:
    memory = semantic_memory
    project = unique("similar")
    facts = [
        {"subject": "Atlas Moran", "predicate": "works at", "object": "Acme Corp"},
        {"subject": "Tobias Wren", "predicate": "uses", "object": "Linear", "source_role": "tool"},
        {"subject": "田中太郎", "predicate": "lives in", "object": "大阪"},
        {"subject": "김민수", "predicate": "works at", "object": "Samsung"},
        {"subject": "Иван Петров", "predicate": "works at", "object": "Газпром"},
        {"subject": "Jan Nowak", "predicate": "works at", "object": "Orlen"},
    ]
    request = FactsRequest.model_validate({"facts": [{"source_role": "user", **f} for f in facts]})
    memory.store_facts(project, request)
    memory.index_pending(project)

    def facts_of(question: str, roles: list[str] | None = None) -> list[str]:
        body = {"question": question, "surfaces": ["facts"], "source_roles": roles or ["user"]}
        answer = bodies.recall(memory.recall(project, RecallRequest.model_validate(body)))
        assert answer["degraded"] == []
        return [f["statement"] for f in answer["facts"]]

    assert facts_of("Where is Atlas Moren employed?") == ["Atlas Moran works at Acme Corp"]
    # A family or given name alone is a part of the name.
    assert facts_of("Where is Moran employed?") == ["Atlas Moran works at Acme Corp"]
    assert facts_of("Where is Atlas employed?") == ["Atlas Moran works at Acme Corp"]
    # A family name with a joined genitive "s", before a capitalised German noun.
    assert facts_of("Wo arbeitet Morans Bruder?") == ["Atlas Moran works at Acme Corp"]
    # So in scripts without capitals: a family name, a given name less its particle.
    assert facts_of("田中さんはどこに住んでいますか") == ["田中太郎 lives in 大阪"]
    assert facts_of("민수는 어디서 일해요?") == ["김민수 works at Samsung"]
    # A name in a case form, whole or a part of it (Russian, Polish).
    assert facts_of("Кто брат Ивана?") == ["Иван Петров works at Газпром"]
    assert facts_of("Kim jest brat Jana Nowaka?") == ["Jan Nowak works at Orlen"]
    assert facts_of("Co wiesz o Nowaku?") == ["Jan Nowak works at Orlen"]
    # `explain` says which words found the name, and how.
    for question, asked_as, signal in [
        ("Kim jest brat Jana Nowaka?", "Jana Nowaka", "case"),
        ("Where is Moran employed?", "Moran", "part"),
        ("Where is Atlas Moren employed?", "Atlas Moren", "spelling"),
    ]:
        body = {"question": question, "surfaces": ["facts"], "explain": True}
        answer = bodies.recall(memory.recall(project, RecallRequest.model_validate(body)))
        why = answer["facts"][0]["why"]
        assert (why["asked_as"], why["signal"]) == (asked_as, signal), question
    assert facts_of("Where is Paris Morgan employed?") == []
    # A name only another role uses is not similar for these roles.
    assert facts_of("What does Tobias Wrenn use?") == []
    assert facts_of("What does Tobias Wrenn use?", ["tool"]) == ["Tobias Wren uses Linear"]
