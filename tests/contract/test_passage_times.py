"""Each recalled passage carries its message's occurred_at and recorded_at (as
GET /v1/messages/{id} gives them), not counted against the budget; on both stores."""

from __future__ import annotations

import pytest

from taisce.api import bodies
from taisce.domain.budget import item_characters
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

MESSAGES = [
    ("m1", "Dinner with Mara is on Friday at 9am.", "2024-06-03T10:00:00Z"),
    ("m2", "The sailing club meets on Thursdays.", "2024-07-01T10:00:00Z"),
]


# A question asking when, one naming a month (its candidates ordered by their messages'
# times) and a plain one: each reads the passages another way.
@pytest.mark.parametrize(
    "question", ["When is dinner with Mara?", "Who did I have dinner with in June?", "Mara dinner"]
)
def test_a_recalled_passage_has_its_message_times(semantic_memory: Memory, question: str) -> None:
    project = unique("times")
    sent = [{"id": i, "role": "user", "content": c, "occurred_at": t} for i, c, t in MESSAGES]
    store_embedded(semantic_memory, project, sent)
    found = recalled_passages(semantic_memory, project, question)
    assert found, "no passage recalled"
    for passage in found:
        shown = bodies.message_with_passages(
            semantic_memory.message_with_passages(project, passage["message_id"])
        )
        assert passage["occurred_at"] == shown["message"]["occurred_at"]
        assert passage["recorded_at"] == shown["message"]["recorded_at"]
        # Times are not counted, like ids.
        assert item_characters("passages", passage) == len(passage["role"]) + len(passage["quote"])
    times = {p["message_id"]: p["occurred_at"] for p in found}
    assert times.get("m1") == "2024-06-03T10:00:00Z"
