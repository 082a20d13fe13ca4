"""With a model across the network (Semantic.early_vector, set for Bedrock), a recall asks
for the question's vector before the store's first read, so the two waits overlap; with
a local model it asks only when a step needs the vector. Either way the answer is the
same. On both stores."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest

from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.recall import Semantic
from taisce.service.memory import Memory
from tests.contract.factories import unique

WAIT = 5.0


class Handshake:
    """The model's call and the store's name lookup, each noting whether the other had
    begun when it began (the model waits a moment for the lookup, as a network call
    would still be on its way)."""

    def __init__(self, early: bool) -> None:
        self.early = early
        self.asked = threading.Event()
        self.names_read = threading.Event()
        self.model_first: bool | None = None


class Model:
    """The real local model, with the handshake around each call."""

    def __init__(self, model: Any, handshake: Handshake) -> None:
        self.model = model
        self.handshake = handshake
        self.name, self.dimensions = model.name, model.dimensions

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.handshake.asked.set()
        self.handshake.names_read.wait(0.5)
        return self.model.embed(texts)


class Store:
    """The store under test, noting at its first name lookup whether the model was
    already asked."""

    def __init__(self, store: Any, handshake: Handshake) -> None:
        self._store = store
        self.handshake = handshake

    def resolve_names(self, *args: Any, **kwargs: Any) -> Any:
        h = self.handshake
        if h.model_first is None:
            h.model_first = h.asked.wait(WAIT if h.early else 0.2)
        try:
            return self._store.resolve_names(*args, **kwargs)
        finally:
            h.names_read.set()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.mark.parametrize("early", [True, False], ids=["network model", "local model"])
def test_the_question_vector_is_asked_for_beside_the_first_read(
    store: Any, local_embedder: Any, tmp_path: Any, early: bool
) -> None:
    from taisce.adapters.sqlite.vectors import SqliteVectorIndex

    project = unique("early")
    index = SqliteVectorIndex(tmp_path / "vectors.sqlite3", local_embedder.dimensions)
    plain = Memory(store, Limits(), semantic=Semantic(local_embedder, index))
    messages = [
        {"id": "m1", "role": "user", "content": "Dana: I work as a dentist in Cork."},
        {"id": "m2", "role": "user", "content": "Dana: The weather was lovely today."},
    ]
    plain.store_messages(project, MessagesRequest.model_validate({"messages": messages}))
    facts = [
        {"subject": "Dana", "predicate": "works as", "object": "dentist", "source_role": "user"}
    ]
    plain.store_facts(project, FactsRequest.model_validate({"facts": facts}))
    plain.index_pending(project)

    handshake = Handshake(early)
    watched = Memory(
        Store(store, handshake),
        Limits(),
        semantic=Semantic(Model(local_embedder, handshake), index, early_vector=early),
    )
    request = RecallRequest.model_validate(
        {"question": "What does Dana do for work?", "explain": True}
    )
    answer = bodies.recall(watched.recall(project, request))
    assert handshake.model_first is early
    assert answer == bodies.recall(plain.recall(project, request))
    assert [f["object"] for f in answer["facts"]] == ["dentist"]
    assert answer["passages"] and answer["degraded"] == []
    index.close()


class Recording:
    """The real local model, noting every text it is asked for."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name, self.dimensions = model.name, model.dimensions
        self.texts: list[str] = []
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        self.threads.append(threading.current_thread().name)
        return self.model.embed(texts)


def test_a_path_asks_once_for_the_question_without_its_names(
    store: Any, local_embedder: Any, tmp_path: Any
) -> None:
    from taisce.adapters.sqlite.vectors import SqliteVectorIndex

    project = unique("paths")
    index = SqliteVectorIndex(tmp_path / "vectors.sqlite3", local_embedder.dimensions)
    plain = Memory(store, Limits(), semantic=Semantic(local_embedder, index))
    facts = [
        {"subject": "Sean", "predicate": "is the partner of", "object": "Vera"},
        {"subject": "Sean", "predicate": "is allergic to", "object": "kiwi fruit",
         "object_kind": "value"},
        {"subject": "Vera", "predicate": "is allergic to", "object": "celery",
         "object_kind": "value"},
        {"subject": "Vera", "predicate": "plays", "object": "hurling", "object_kind": "value"},
    ]  # fmt: skip
    given = [{"source_role": "user", **f} for f in facts]
    plain.store_facts(project, FactsRequest.model_validate({"facts": given}))
    plain.index_pending(project)
    request = RecallRequest.model_validate(
        {"question": "What is Sean's partner allergic to?", "hops": 2, "explain": True}
    )
    answers = []
    for early in (True, False):
        model = Recording(local_embedder)
        memory = Memory(store, Limits(), semantic=Semantic(model, index, early_vector=early))
        answers.append(bodies.recall(memory.recall(project, request)))
        # The question, once the question without its names (for the paths), and once
        # without the names it writes (step 4's topic ranking).
        assert sorted(model.texts) == sorted(
            [
                "What is Sean's partner allergic to?",
                "What is someone's partner allergic to?",
                "What is someone partner allergic to?",
            ]
        )
        # A model across the network is asked in a thread, beside the store's reads.
        assert all(n == "question-vector" for n in model.threads) is early
    assert answers[0] == answers[1]
    objects = [f["object"] for f in answers[0]["facts"]]
    assert "celery" in objects
    assert answers[0]["facts"][objects.index("celery")]["why"]["path"] is True
    index.close()
