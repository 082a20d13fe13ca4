"""An erasure that commits while the worker embeds what it read before: the vectors and
indexed text written after the erasure are deleted by the worker itself, so nothing of
the erased entity stays in the index (embedded store and vector index, one file)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.recall import Semantic
from taisce.service.memory import Memory

DIMS = 4
KINDS = ("entity", "passage", "report")


class Embedder:
    """A stand-in model that runs `during` (an erasure) inside one embedding call,
    as a request would while the worker waits on the real model."""

    name = "test"
    dimensions = DIMS

    def __init__(self) -> None:
        self.during: Callable[[], object] | None = None
        self.when: Callable[[Sequence[str]], bool] = lambda texts: True

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.during is not None and self.when(texts):
            during, self.during = self.during, None
            during()
        return [[1.0, float(len(t) % 3), 0.0, 0.0] for t in texts]


@pytest.fixture
def parts(tmp_path: Path) -> tuple[Memory, Embedder, SqliteVectorIndex, Path]:
    path = tmp_path / "t.sqlite3"
    store = SqliteStore(path)
    embedder, index = Embedder(), SqliteVectorIndex(path, DIMS)
    memory = Memory(store, Limits(), semantic=Semantic(embedder, index))
    facts = [
        {"subject": "Atlas Ward", "predicate": "works at", "object": "Acme", "source_role": "user"},
        {"subject": "Atlas Ward", "predicate": "likes", "object": "tea", "object_kind": "value",
         "source_role": "user"},
        {"subject": "Maya", "predicate": "lives in", "object": "Galway", "source_role": "user"},
    ]  # fmt: skip
    memory.store_facts("p", FactsRequest.model_validate({"facts": facts}))
    messages = [
        {"id": "m1", "role": "user", "content": "Atlas Ward likes tea.\n\nMaya lives in Galway."}
    ]
    memory.store_messages("p", MessagesRequest.model_validate({"messages": messages}))
    return memory, embedder, index, path


def left_in_index(path: Path) -> list[str]:
    """Every indexed id and text, straight from the file."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT id FROM vectors").fetchall()
        rows += db.execute("SELECT id || ' ' || text FROM vector_text").fetchall()
    return [r[0] for r in rows]


def test_items_embedded_across_an_erasure_are_not_left_in_the_index(
    parts: tuple[Memory, Embedder, SqliteVectorIndex, Path],
) -> None:
    memory, embedder, index, path = parts
    embedder.during = lambda: memory.erase_now("p", "Atlas Ward")

    memory.index_pending("p")

    assert embedder.during is None  # the erasure ran while the batch was embedded
    left = left_in_index(path)
    assert left and not [t for t in left if "atlas" in t.casefold()]
    assert any("maya" in t.casefold() for t in left)  # what stays is indexed
    for kind in KINDS:
        assert index.search_text("p", kind, "Atlas Ward", 10) == []


def test_reports_embedded_across_an_erasure_are_not_left_in_the_index(
    parts: tuple[Memory, Embedder, SqliteVectorIndex, Path],
) -> None:
    memory, embedder, index, path = parts
    memory.index_pending("p")
    # The erasure lands while the rebuilt reports are embedded (after they were stored).
    embedder.when = lambda texts: any("Atlas" in t for t in texts)
    embedder.during = lambda: memory.erase_now("p", "Atlas Ward")

    memory.rebuild_reports("p")

    assert embedder.during is None
    assert not [t for t in left_in_index(path) if "atlas" in t.casefold()]
    assert index.search_text("p", "report", "Atlas", 10) == []
    # The worker's next pass rebuilds what stays, without him.
    memory.rebuild_reports("p")
    reports = memory.store.reports_of_entity("p", "maya", ["user"])
    assert reports and all("atlas" not in (r.title + r.summary).casefold() for r in reports)


def test_fact_vectors_stay_unless_their_fact_was_erased_meanwhile(
    parts: tuple[Memory, Embedder, SqliteVectorIndex, Path],
) -> None:
    # Each fact is embedded (ranking by meaning); the check for items erased meanwhile
    # once left facts out, so every fact vector was deleted just after it was written.
    memory, embedder, _index, path = parts
    embedder.during = lambda: memory.erase_now("p", "Atlas Ward")

    memory.index_pending("p")

    with sqlite3.connect(path) as db:
        vectors = {r[0] for r in db.execute("SELECT id FROM vectors WHERE kind = 'fact'")}
        held = {r[0] for r in db.execute("SELECT id FROM facts")}
    assert len(held) == 1  # Maya's; Atlas Ward's two were erased
    assert vectors == held
