"""Step 4 follows the facts nearest the question to the messages they cite; a fact that
steps 1-2 already read (through the same roles and filters) is not read again. The
ranks are the same as reading every one, and a fact of a role not asked for still
points at nothing. On both stores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.filters import FactFilter
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.question_vector import Question as _Question
from taisce.domain.recall import Semantic, _cited_messages
from taisce.service.memory import Memory
from tests.contract.factories import unique

MESSAGES = [
    {"id": "m1", "role": "user", "content": "Dana: I work as a dentist in Cork."},
    {"id": "m2", "role": "user", "content": "Dana: My practice opens at eight."},
    {"id": "m3", "role": "assistant", "content": "Dana told me she works nights."},
    {"id": "m4", "role": "user", "content": "Bea: I work as a nurse in Galway."},
]
FACTS = [
    {"subject": "Dana", "predicate": "works as", "object": "dentist", "object_kind": "value",
     "source_role": "user", "message_id": "m1"},
    {"subject": "Dana", "predicate": "opens her practice at", "object": "eight",
     "object_kind": "value", "source_role": "user", "message_id": "m2"},
    {"subject": "Dana", "predicate": "works", "object": "nights", "object_kind": "value",
     "source_role": "assistant", "message_id": "m3"},
    {"subject": "Bea", "predicate": "works as", "object": "nurse", "object_kind": "value",
     "source_role": "user", "message_id": "m4"},
]  # fmt: skip


class Counting:
    """The store under test, noting the ids each fact_pointers call asks for."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.asked: list[list[str]] = []

    def fact_pointers(self, project: str, ids: Sequence[str]) -> Any:
        self.asked.append(list(ids))
        return self._store.fact_pointers(project, ids)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def test_facts_step_1_read_are_not_read_again(
    store: Any, local_embedder: Any, tmp_path: Any
) -> None:
    from taisce.adapters.sqlite.vectors import SqliteVectorIndex

    project = unique("cited")
    index = SqliteVectorIndex(tmp_path / "vectors.sqlite3", local_embedder.dimensions)
    plain = Memory(store, Limits(), semantic=Semantic(local_embedder, index))
    plain.store_messages(project, MessagesRequest.model_validate({"messages": MESSAGES}))
    plain.store_facts(project, FactsRequest.model_validate({"facts": FACTS}))
    plain.index_pending(project)
    every_role = ("user", "assistant")
    ids = {f.object: f.id for f in store.facts_about(project, ["dana", "bea"], every_role, 10)}

    counting = Counting(store)
    memory = Memory(counting, Limits(), semantic=Semantic(local_embedder, index))
    request = RecallRequest.model_validate(
        {"question": "Where does Dana work?", "source_roles": ["user"], "explain": True}
    )
    answer = bodies.recall(memory.recall(project, request))
    assert answer["facts"][0]["object"] == "dentist"
    # Only the fact step 1 did not read, Bea's (the index finds no assistant's fact).
    assert counting.asked == [[ids["nurse"]]]
    ranks = {p["message_id"]: p["why"]["fact_rank"] for p in answer["passages"]}
    assert ranks.get("m3") is None  # an assistant's fact points at nothing here
    assert ranks["m1"] is not None and ranks["m2"] is not None and ranks["m4"] is not None

    # The ranks equal those of reading every fact nearest the question.
    q = _Question(request.question, local_embedder)
    filters = FactFilter()
    read = {f.id: f for f in store.facts_about(project, ["dana"], ("user",), limit=10)}
    every = _cited_messages(store, project, q, index, ("user",), filters, {})
    assert _cited_messages(store, project, q, index, ("user",), filters, read) == every
    assert set(every) == {"m1", "m2", "m4"}
    index.close()
