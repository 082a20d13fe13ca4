"""Names as people read them, on every store (issue 15): spellings that differ only by
invisible characters or by a separator between the name's parts are one entity, for
recall and for erasure alike."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.erasure import MASK, names_it
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.moto_server import shared_moto

VARIANTS = [
    "Xanthe\u200bMorrow",
    "X\u00adanthe Morrow",
    "Xan\u200dthe Morrow",
    "Xanthe-Morrow",
    "Xanthe_Morrow",
    "Xanthe.Morrow",
    "Xanthe/Morrow",
    "XANTHE\u2060 MORROW",
]
KEY = "xanthe morrow"
ROLES = ["user", "assistant", "system", "tool"]


@pytest.fixture
def store(open_store: Any) -> Any:
    """Erasure Scans the table on DynamoDB today: a table of its own keeps it small."""
    opened = open_store()
    if isinstance(opened, DynamoDbStore):
        return shared_moto().table_named("taisce-erasure").store()
    return opened


def _recall(memory: Memory, project: str, question: str) -> list[str]:
    body = {"question": question, "source_roles": ROLES, "hops": 1}
    return [
        f["id"]
        for f in bodies.recall(memory.recall(project, RecallRequest.model_validate(body)))["facts"]
    ]


def test_every_spelling_is_one_entity_and_erasure_masks_them_all(store: Any) -> None:
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    project = unique("variants")
    facts = [
        {"id": f"v{i}", "subject": v, "predicate": "lives in", "object": "Galway",
         "source_role": "user"}
        for i, v in enumerate(VARIANTS)
    ] + [{"id": "keep", "subject": "Maya", "predicate": "knows", "object": "Galway",
          "source_role": "user"}]  # fmt: skip
    memory.store_facts(project, FactsRequest.model_validate({"facts": facts}))
    messages = [
        {"id": f"m{i}", "role": "user", "content": f"Yesterday {v} moved to Galway. Maya stayed."}
        for i, v in enumerate(VARIANTS)
    ] + [{"id": "m-keep", "role": "user", "content": "Maya stayed in Galway."}]
    memory.store_messages(project, MessagesRequest.model_validate({"messages": messages}))

    # One entity: any spelling in a question finds the facts of every spelling (asked
    # about as a whole, so that every fact of the entity comes back: docs/API.md).
    every = [f"v{i}" for i in range(len(VARIANTS))]
    for spelling in ["Xanthe Morrow", *VARIANTS]:
        assert _recall(memory, project, f"What about {spelling}?") == every, spelling

    counts = memory.erase_now(project, "Xanthe Morrow")
    assert counts["facts"] == len(VARIANTS)
    assert counts["messages"] == len(VARIANTS)

    for i, spelling in enumerate(VARIANTS):
        held = store.message(project, f"m{i}")
        assert held is not None and len(held.content) == len(messages[i]["content"])
        assert not names_it(held.content, KEY), repr(held.content)
        assert MASK in held.content
        assert not any(names_it(p.quote, KEY) for p in store.passages_of(project, f"m{i}"))
        assert _recall(memory, project, f"Where does {spelling} live?") == []
    assert store.message(project, "m-keep").content == messages[-1]["content"]
    assert {f.id for f in store.project_facts(project)} == {"keep"}
    assert _recall(memory, project, "Who knows Galway? Maya?") == ["keep"]
