"""Recall step 2 (similar names) skips the spans' model call and the entity index search
when the project holds no entity name: no span could match one. The answer is the same
as when step 2 runs in full; once a name is stored, step 2 finds it by meaning again.
On both stores, with the real local model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.recall import Semantic
from taisce.service.memory import Memory
from tests.contract.factories import unique


class CountingModel:
    """The real local model, counting its calls."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name, self.dimensions = model.name, model.dimensions
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.model.embed(texts)


class CountingIndex(SqliteVectorIndex):
    """The embedded vector index, counting searches by kind."""

    def __init__(self, path: Path, dimensions: int) -> None:
        super().__init__(path, dimensions)
        self.searched: Counter[str] = Counter()

    def search(self, project, kind, vector, k, roles=None):  # type: ignore[no-untyped-def]
        self.searched[kind] += 1
        return super().search(project, kind, vector, k, roles)


class ListsAName:
    """The store under test, except that its entity listing holds one unrelated name:
    step 2 then runs in full (model call and entity search) on a memory of messages."""

    def __init__(self, store: Any) -> None:
        self._store = store

    def entity_keys(self, project: str, limit: int) -> list[str]:
        return ["zebulon quarry"]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


MESSAGES = [
    {"id": "m1", "role": "user", "content": "Caroline: I went to the LGBTQ support group."},
    {"id": "m2", "role": "assistant", "content": "Melanie: I painted a sunrise by the lake."},
    {"id": "m3", "role": "user", "content": "Caroline: Counselling is what I want to do."},
]
QUESTION = "When did Caroline go to the LGBTQ support group?"


def test_no_entity_name_no_span_model_call(store: Any, local_embedder: Any, tmp_path: Path) -> None:
    project = unique("skip")
    model = CountingModel(local_embedder)
    index = CountingIndex(tmp_path / "vectors.sqlite3", local_embedder.dimensions)
    memory = Memory(store, Limits(), semantic=Semantic(model, index))
    memory.store_messages(project, MessagesRequest.model_validate({"messages": MESSAGES}))
    memory.index_pending(project)
    request = RecallRequest.model_validate({"question": QUESTION, "explain": True, "hops": 2})

    model.calls.clear()
    answer = bodies.recall(memory.recall(project, request))
    # One model call: the question's (with its twin without the names it writes, for
    # step 4); none for its spans ("Caroline", "LGBTQ", ...).
    assert model.calls == [[QUESTION, "When did someone go to the someone support group?"]]
    assert "entity" not in index.searched
    assert answer["degraded"] == [] and answer["facts"] == []
    assert answer["passages"][0]["message_id"] == "m1"

    # Step 2 in full (the listing holds a name no span is near) answers the same.
    model.calls.clear()
    index.searched.clear()
    full = Memory(ListsAName(store), Limits(), semantic=Semantic(model, index))
    assert bodies.recall(full.recall(project, request)) == answer
    assert len(model.calls) == 2 and model.calls[0] != [QUESTION]  # the spans, then it
    assert index.searched["entity"] > 0

    # Once a name is held, step 2 compares the spans by meaning again.
    facts = [{"subject": "Atlas Moran", "predicate": "works at", "object": "Acme Corp"}]
    memory.store_facts(
        project,
        FactsRequest.model_validate({"facts": [{"source_role": "user", **f} for f in facts]}),
    )
    memory.index_pending(project)
    model.calls.clear()
    index.searched.clear()
    misspelt = bodies.recall(
        memory.recall(
            project, RecallRequest.model_validate({"question": "Where is Atlas Moren employed?"})
        )
    )
    assert ["Atlas Moren", "Atlas", "Moren"] in model.calls
    assert index.searched["entity"] > 0
    assert [f["object"] for f in misspelt["facts"]] == ["Acme Corp"]

    # A question whose only capitalised word opens it ("What") has no name-like span:
    # with names held, still one model call (the question's) and no entity search.
    model.calls.clear()
    index.searched.clear()
    plain = "What did the posters at the poetry reading say?"
    unnamed = bodies.recall(
        memory.recall(project, RecallRequest.model_validate({"question": plain}))
    )
    assert model.calls == [[plain]]
    assert "entity" not in index.searched
    assert unnamed["facts"] == [] and unnamed["degraded"] == []
    index.close()
