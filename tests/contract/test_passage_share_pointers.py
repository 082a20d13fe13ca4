"""Which score `message_share` is a share of, on both stores: the fused score with what
the facts' pointers add (the score step 4 spreads across a message's passages), not the
two rankings' fusion alone. A later passage of a cited message then shows exactly the
sibling factor, 0.5, as docs/API.md states it, however much its message's fact added."""

from __future__ import annotations

from typing import Any

from taisce.domain.fact_ranking import POINTER_WEIGHT
from taisce.domain.ingest import FactsRequest
from taisce.domain.passage_ranking import (
    MEANING_WEIGHT,
    RRF_K,
    SIBLING,
    TOPIC_WEIGHT,
    WORDS_WEIGHT,
)
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.passage_recall import recalled_passages, store_embedded

# m1 is long: two passages about the boat. A fact cites m1, so both gain its pointer.
LONG = (
    "We finally bought the sailing boat after months of looking at every harbour on the "
    "coast, and it is blue. "
    "The sailing boat needs new sails and a fresh coat of paint before the summer season "
    "starts properly."
)
MESSAGES = [
    {"id": "m1", "role": "user", "content": LONG, "occurred_at": "2024-06-03T10:00:00Z"},
    {"id": "m2", "role": "user", "content": "The sailing club meets on Thursdays."},
]
FACTS = [
    {"subject": "Sam", "predicate": "bought", "object": "a blue sailing boat",
     "object_kind": "value", "source_role": "user", "message_id": "m1",
     "statement": "Sam bought a blue sailing boat."},
]  # fmt: skip


def _fused_without_pointers(why: dict[str, Any]) -> float:
    """The rankings' reciprocal-rank fusion alone, from the ranks `why` shows (the
    question writes a name, "Sam": the topic ranking is its own)."""
    vector, word, topic = why["vector_rank"], why["word_rank"], why["topic_rank"]
    return (
        (MEANING_WEIGHT / (RRF_K + vector) if vector else 0.0)
        + (WORDS_WEIGHT / (RRF_K + word) if word else 0.0)
        + (TOPIC_WEIGHT / (RRF_K + topic) if topic else 0.0)
    )


def test_message_share_is_of_the_score_with_the_pointers(semantic_memory: Memory) -> None:
    project = unique("share")
    store_embedded(semantic_memory, project, MESSAGES)
    semantic_memory.store_facts(project, FactsRequest.model_validate({"facts": FACTS}))
    semantic_memory.index_pending(project)

    passages = recalled_passages(
        semantic_memory, project, "What about the sailing boat Sam bought?", explain=True
    )
    why = {p["id"]: p["why"] for p in passages}
    assert {"m1#0", "m1#1"} <= set(why)
    # Both of m1's passages gained its fact's pointer (the first cited message).
    assert why["m1#0"]["fact_rank"] == why["m1#1"]["fact_rank"] == 1
    pointer = POINTER_WEIGHT / (RRF_K + 1)
    later = next(pid for pid in ("m1#0", "m1#1") if why[pid]["message_share"] is not None)
    # Exactly the sibling factor: spread / (fused + pointer) = 0.5 ...
    assert why[later]["message_share"] == SIBLING
    # ... which a share of the fusion alone would not be: (fused + pointer) * 0.5 / fused.
    fused = _fused_without_pointers(why[later])
    assert fused > 0.0
    assert SIBLING * (fused + pointer) / fused != why[later]["message_share"]
