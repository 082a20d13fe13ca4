"""The local worker serves every project from one thread: a project's vectors are
embedded, and its messages extracted, a turn at a time (Worker.vector_turn batches and
Worker.extraction_turn messages a pass), so a bulk load in one project does not hold
another project's writes until it is all done."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.recall import Semantic
from taisce.local.worker import Worker
from taisce.service.memory import Memory
from taisce.service.work import VECTOR_BATCH


class Embedder:
    """A stand-in model (the schedule is under test, not the vectors)."""

    name, dimensions = "stand-in", 2

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


def store(memory: Memory, project: str, count: int, prefix: str) -> None:
    """`count` facts (each a statement and a name to embed), 100 a request."""
    for start in range(0, count, 100):
        batch = [
            {
                "subject": f"{prefix} {n}",
                "predicate": "likes",
                "object": "tea",
                "source_role": "user",
            }
            for n in range(start, min(count, start + 100))
        ]
        memory.store_facts(project, FactsRequest.model_validate({"facts": batch}))


def pending(memory: Memory, project: str) -> int:
    return len(memory.store.pending_vectors(project, 100_000))


def test_a_bulk_load_does_not_hold_another_project_s_vectors(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    index = SqliteVectorIndex(path, 2)
    semantic = Semantic(Embedder(), index, embed_on_write=False)
    memory = Memory(SqliteStore(path), Limits(), semantic=semantic)
    # "a-bulk" sorts first: without turns its whole load is embedded before "b-chat".
    store(memory, "a-bulk", 800, "Bulk")
    store(memory, "b-chat", 1, "Chat")
    bulk = pending(memory, "a-bulk")
    assert bulk > 2 * VECTOR_BATCH and pending(memory, "b-chat") > 0

    worker = Worker(memory, vector_turn=2)
    assert worker.run_once(reports=False) is True  # work left by its turn: no back-off
    assert pending(memory, "b-chat") == 0
    assert pending(memory, "a-bulk") == bulk - 2 * VECTOR_BATCH
    for _ in range(bulk // (2 * VECTOR_BATCH) + 1):
        worker.run_once(reports=False)
    assert pending(memory, "a-bulk") == 0

    # A command that settles everything (taisce reindex) takes it all in one pass.
    store(memory, "a-bulk", 400, "More")
    assert pending(memory, "a-bulk") > 2 * VECTOR_BATCH
    Worker(memory, vector_turn=None).run_once(reports=False)
    assert pending(memory, "a-bulk") == 0


class Extractor:
    """A stand-in model that finds no fact (the schedule is under test)."""

    name = "stand-in"

    def __init__(self) -> None:
        self.calls = 0

    def extract(self, prompt: object) -> str:
        self.calls += 1
        return '{"facts": []}'


def messages(memory: Memory, project: str, count: int) -> None:
    for start in range(0, count, 10):
        batch = [
            {"role": "user", "content": f"Message {n} of {project}."}
            for n in range(start, min(count, start + 10))
        ]
        memory.store_messages(project, MessagesRequest.model_validate({"messages": batch}))


def test_a_backlog_of_extractions_does_not_hold_another_project_s(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite3"
    store = SqliteStore(path, mark_vectors=False, mark_extractions=True)
    extractor = Extractor()
    memory = Memory(store, Limits(), extractor=extractor, retry_wait=0)
    messages(memory, "a-bulk", 30)
    messages(memory, "b-chat", 1)

    worker = Worker(memory, extraction_turn=10)
    assert worker.run_once(reports=False) is True  # work left by its turn: no back-off
    assert len(store.pending_extractions("b-chat", 100)) == 0
    assert len(store.pending_extractions("a-bulk", 100)) == 20
    assert extractor.calls == 11
    worker.run_once(reports=False)
    worker.run_once(reports=False)
    assert len(store.pending_extractions("a-bulk", 100)) == 0 and extractor.calls == 31


def test_a_project_s_many_changed_reports_do_not_hold_another_s(tmp_path: Path) -> None:
    store_ = SqliteStore(tmp_path / "m.sqlite3", mark_vectors=False)
    memory = Memory(store_, Limits())
    store(memory, "a-bulk", 300, "Bulk")
    store(memory, "b-chat", 1, "Chat")
    bulk = len(store_.dirty_entities("a-bulk"))
    assert bulk > 200 and store_.dirty_entities("b-chat")

    worker = Worker(memory, report_turn=100)
    assert worker.run_once() is True  # work left by its turn: no back-off
    assert store_.dirty_entities("b-chat") == []
    assert len(store_.dirty_entities("a-bulk")) == bulk - 100
    # The marks taken are the first in key order; the rest wait for the next turns.
    while store_.dirty_entities("a-bulk"):
        worker.run_once()
    assert store_.reports_of_entity("a-bulk", "tea", ["user"])
    assert store_.reports_of_entity("b-chat", "tea", ["user"])

    # Without a turn every mark goes in one pass.
    store(memory, "a-bulk", 300, "More")
    Worker.all_in_a_pass(memory).run_once()
    assert store_.dirty_entities("a-bulk") == []
