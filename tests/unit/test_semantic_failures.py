"""A model or index that fails during a recall degrades it; it never fails it, and
what is stored stays stored when indexing fails."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.ports.vectors import EmbeddingError, VectorIndexError
from taisce.domain.recall import Semantic
from taisce.service.memory import Memory

DIMS = 4
NAMES = {"Atlas", "Acme"}


class Embedder:
    """A stand-in model whose failures the test switches on (fault injection)."""

    name = "test"
    dimensions = DIMS

    def __init__(self) -> None:
        self.failing = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failing:
            raise EmbeddingError("the model is down")
        # Entity names point one way and all other text another, so no question
        # is "similar" to a name and reports and passages are searched.
        return [[0.0, 1.0, 0.0, 0.0] if t in NAMES else [1.0, 0.0, 0.0, 0.0] for t in texts]


class Index(SqliteVectorIndex):
    def __init__(self, path: Path) -> None:
        super().__init__(path, DIMS)
        self.failing_kinds: set[str] = set()

    def search(self, project, kind, vector, k, roles=None):  # type: ignore[no-untyped-def]
        if kind in self.failing_kinds:
            raise VectorIndexError(f"{kind} index is down")
        return super().search(project, kind, vector, k, roles)


@pytest.fixture
def parts(tmp_path: Path) -> tuple[Memory, Embedder, Index]:
    store = SqliteStore(tmp_path / "t.sqlite3")
    embedder, index = Embedder(), Index(tmp_path / "t.sqlite3")
    memory = Memory(store, Limits(), semantic=Semantic(embedder, index))
    memory.store_facts(
        "p",
        FactsRequest.model_validate(
            {
                "facts": [
                    {
                        "subject": "Atlas",
                        "predicate": "works at",
                        "object": "Acme",
                        "source_role": "user",
                    }
                ]
            }
        ),
    )
    memory.store_messages(
        "p",
        MessagesRequest.model_validate(
            {"messages": [{"id": "m1", "role": "user", "content": "Atlas likes tea."}]}
        ),
    )
    memory.index_pending("p")
    memory.rebuild_reports("p")
    return memory, embedder, index


def ask(memory: Memory, question: str, **controls: object) -> dict:
    return bodies.recall(
        memory.recall("p", RecallRequest.model_validate({"question": question, **controls}))
    )


def test_all_steps_run_when_nothing_fails(parts: tuple[Memory, Embedder, Index]) -> None:
    memory, _, _ = parts
    answer = ask(memory, "something else entirely")
    assert answer["degraded"] == []
    assert answer["reports"] and answer["passages"]


def test_a_failing_model_loses_what_needs_it(parts: tuple[Memory, Embedder, Index]) -> None:
    memory, embedder, _ = parts
    embedder.failing = True
    exact = ask(memory, "Where does Atlas work?")
    assert [f["statement"] for f in exact["facts"]] == ["Atlas works at Acme"]
    assert exact["degraded"] == ["passages"]  # reports need not run: a name matched
    themed = ask(memory, "Where does Atlas work?", themes=True, surfaces=["passages", "reports"])
    assert themed["degraded"] == ["passages"]  # themes come from the graph, not the model
    assert themed["reports"]
    # Step 2 compares the question's name-like spans ("Hermes"): by meaning it needs
    # the model; a question with none ("who?") needs no model for step 2.
    nothing = ask(memory, "Who is Hermes?", surfaces=["reports", "facts", "passages"])
    assert nothing["degraded"] == ["reports", "facts", "passages"]  # in request order
    assert nothing["facts"] == nothing["reports"] == nothing["passages"] == []
    assert ask(memory, "who?")["degraded"] == ["reports", "passages"]
    # Spelling still finds a misspelt name when the model is down (facts degraded:
    # what the vectors would have added is missing).
    typo = ask(memory, "Where does Atlass work?")
    assert [f["statement"] for f in typo["facts"]] == ["Atlas works at Acme"]
    assert typo["degraded"] == ["facts", "passages"]  # a name matched: no reports step


def test_a_failing_index_loses_only_its_surface(parts: tuple[Memory, Embedder, Index]) -> None:
    memory, _, index = parts
    index.failing_kinds = {"passage"}
    answer = ask(memory, "who?")
    assert answer["degraded"] == ["passages"]
    assert answer["reports"]
    index.failing_kinds = {"entity", "report"}
    answer = ask(memory, "Who is Hermes?")
    assert answer["degraded"] == ["facts", "reports"]
    assert answer["passages"]
    assert ask(memory, "who?")["degraded"] == ["reports"]  # no name-like span: no step 2


def test_a_failing_model_leaves_vectors_pending_until_it_recovers(
    parts: tuple[Memory, Embedder, Index],
) -> None:
    memory, embedder, _ = parts
    embedder.failing = True
    memory.store_messages(
        "p",
        MessagesRequest.model_validate(
            {"messages": [{"id": "m2", "role": "user", "content": "Kept anyway."}]}
        ),
    )
    # Stored at once, whatever the model does; its vector waits.
    assert [p.quote for p in memory.store.passages_of("p", "m2")] == ["Kept anyway."]
    assert memory.index_pending("p") == 0
    assert [v.id for v in memory.store.pending_vectors("p", 10)] == ["m2#0"]
    assert memory.work_pending()
    embedder.failing = False
    assert memory.index_pending("p") == 1
    assert memory.store.pending_vectors("p", 10) == []
    answer = ask(memory, "kept", surfaces=["passages"])
    assert "m2" in [p["message_id"] for p in answer["passages"]]


def test_words_rank_passages_when_the_model_is_down(
    parts: tuple[Memory, Embedder, Index],
) -> None:
    memory, embedder, _ = parts
    embedder.failing = True
    answer = ask(memory, "Which drink does Atlas like?", surfaces=["passages"])
    assert answer["degraded"] == ["passages"]
    assert [p["quote"] for p in answer["passages"]] == ["Atlas likes tea."]


def test_reindex_indexes_what_was_stored_without_a_model(tmp_path: Path) -> None:
    from taisce.local.worker import Worker

    plain = SqliteStore(tmp_path / "r.sqlite3", mark_vectors=False)
    without = Memory(plain, Limits())
    without.store_messages(
        "p",
        MessagesRequest.model_validate(
            {"messages": [{"id": "m1", "role": "user", "content": "Atlas likes tea."}]}
        ),
    )
    without.store_facts(
        "p",
        FactsRequest.model_validate(
            {
                "facts": [
                    {
                        "subject": "Atlas",
                        "predicate": "works at",
                        "object": "Acme",
                        "source_role": "user",
                    }
                ]
            }
        ),
    )
    store = SqliteStore(tmp_path / "r.sqlite3")
    memory = Memory(store, Limits(), semantic=Semantic(Embedder(), Index(tmp_path / "r.sqlite3")))
    assert ask(memory, "something", surfaces=["passages"])["passages"] == []
    # One passage, two names (Atlas, Acme) for user, one fact statement.
    assert store.mark_everything() == 4
    worker = Worker(memory)
    assert worker.run_once() is True
    assert not memory.work_pending()
    answer = ask(memory, "something", surfaces=["passages", "reports"])
    assert [p["message_id"] for p in answer["passages"]] == ["m1"]
    assert answer["reports"]


def test_the_worker_reports_work_it_could_not_do(parts: tuple[Memory, Embedder, Index]) -> None:
    from taisce.local.worker import Worker

    memory, embedder, _ = parts
    embedder.failing = True
    memory.store_messages(
        "p",
        MessagesRequest.model_validate(
            {"messages": [{"id": "m3", "role": "user", "content": "Pending for now."}]}
        ),
    )
    worker = Worker(memory)
    assert worker.run_once() is False  # the run loop backs off
    embedder.failing = False
    assert worker.run_once() is True


def test_an_indexed_fact_keeps_its_vector_for_the_ranking(
    parts: tuple[Memory, Embedder, Index],
) -> None:
    # The worker deletes vectors of items gone while they were embedded; a fact still
    # held keeps its vector, so recall's meaning signal sees it (it once did not).
    memory, _, _ = parts
    answer = ask(memory, "Where does Atlas work?", explain=True)
    assert [f["statement"] for f in answer["facts"]] == ["Atlas works at Acme"]
    assert answer["facts"][0]["why"]["similarity"] == pytest.approx(1.0)
