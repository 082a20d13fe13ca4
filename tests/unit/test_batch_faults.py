"""A batch that fails part-way leaves nothing half-stored, and a retry stores it once.

The real SQLite connection is wrapped so that its Nth statement raises (every row
of an executemany counts, and BEGIN and COMMIT too), for every N the batch takes.
After each failure the project must read exactly as before the batch; the retry must
leave it exactly as one clean write does; a second retry must change nothing.
The same for the worker's step: embedding, indexing and clearing the marks.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactIn, MessageIn, make_fact, make_message, split_passages
from taisce.domain.model import Fact, Message, Passage, VectorItem
from taisce.domain.recall import Semantic
from taisce.local.worker import Worker
from taisce.service.memory import Memory

RECORDED = "2026-01-02T03:04:05.000000Z"
# Columns that differ between two equal writes by design: row order and mark tokens.
VOLATILE = {"seq", "token", "project"}


class InjectedFault(sqlite3.OperationalError):
    pass


class Faults:
    """Counts statements across the connections it wraps; the `fail_at`th raises."""

    def __init__(self) -> None:
        self.steps = 0
        self.fail_at: int | None = None

    def step(self) -> None:
        self.steps += 1
        if self.fail_at is not None and self.steps == self.fail_at:
            raise InjectedFault(f"injected failure at statement {self.steps}")

    def wrap(self, file: Any) -> None:
        """Route `file`'s connection (a SqliteFile's) through this counter."""
        real_db = file.db
        faults = self

        class Connection:
            def __init__(self, db: sqlite3.Connection) -> None:
                self._db = db

            def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
                faults.step()
                return self._db.execute(sql, params)

            def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
                cursor = self._db.cursor()
                for row in rows:  # row by row, so a failure can land mid-batch
                    faults.step()
                    cursor.execute(sql, row)
                return cursor

            def __getattr__(self, name: str) -> Any:
                return getattr(self._db, name)

        file.db = lambda: Connection(real_db())


def snapshot(path: Path, project: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the project holds, table by table, without the volatile columns."""
    db = sqlite3.connect(path)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        found: dict[str, list[tuple[Any, ...]]] = {}
        for table in sorted(tables):
            columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")]
            if "project" not in columns:
                continue
            kept = [c for c in columns if c not in VOLATILE]
            rows = db.execute(
                f"SELECT {', '.join(f'[{c}]' for c in kept)} FROM {table} WHERE project = ?",
                (project,),
            ).fetchall()
            found[table] = sorted(rows, key=repr)
        return found
    finally:
        db.close()


def facts(*given: dict[str, Any]) -> list[Fact]:
    return [make_fact(FactIn.model_validate(g), RECORDED) for g in given]


def link(fact_id: str, subject: str, predicate: str, obj: str, **more: Any) -> dict[str, Any]:
    return {"id": fact_id, "subject": subject, "predicate": predicate, "object": obj,
            "source_role": "user", **more}  # fmt: skip


SEEDED_FACTS = facts(
    link("s1", "Atlas", "lives in", "Dublin"), link("s2", "Atlas", "works at", "Acme")
)
# A contradiction (closes s1), new entities, a value, a repeated id, an id already
# stored, another role: every path put_facts takes.
BATCH_FACTS = facts(
    link("b1", "Atlas", "lives in", "Cork", valid_from="2026-01-01T00:00:00Z"),
    link("b2", "Bea", "knows", "Atlas"),
    link("b3", "Bea", "has the title", "designer", object_kind="value"),
    link("b2", "Bea", "knows", "Someone Else"),
    link("s2", "Atlas", "works at", "Acme"),
    link("b4", "Acme", "is based in", "Cork", source_role="tool"),
)


def messages(*given: dict[str, Any]) -> tuple[list[Message], list[Passage]]:
    made = [make_message(MessageIn.model_validate(g), RECORDED) for g in given]
    return made, [p for m in made for p in split_passages(m)]


SEEDED_MESSAGES = messages({"id": "m0", "role": "user", "content": "Already here."})
# Several passages, a repeated id, an id already stored, a document.
BATCH_MESSAGES = messages(
    {"id": "m1", "role": "user", "content": "Atlas moved to Cork. He likes it there. " * 8},
    {"id": "m2", "role": "assistant", "content": "Noted: Atlas lives in Cork."},
    {"id": "m1", "role": "user", "content": "A different text under the same id."},
    {"id": "m0", "role": "user", "content": "Already here."},
    {"id": "m3", "role": "tool", "content": "Acme handbook.\nOffices: Cork.", "source": "h.md"},
)


def open_store(path: Path) -> SqliteStore:
    return SqliteStore(path, mark_vectors=True, mark_extractions=True)


def seed(store: SqliteStore, project: str) -> None:
    store.put_facts(project, SEEDED_FACTS)
    store.put_messages(project, *SEEDED_MESSAGES)


def write_facts(store: SqliteStore, project: str) -> None:
    store.put_facts(project, BATCH_FACTS)


def write_messages(store: SqliteStore, project: str) -> None:
    store.put_messages(project, *BATCH_MESSAGES)


@pytest.mark.parametrize("write", [write_facts, write_messages], ids=["facts", "messages"])
def test_a_batch_failing_at_any_statement_is_all_or_nothing(tmp_path: Path, write: Any) -> None:
    # The batch written once, cleanly: what every retry must come to.
    clean = open_store(tmp_path / "clean.sqlite3")
    seed(clean, "p")
    counting = Faults()
    counting.wrap(clean.file)
    write(clean, "p")
    expected = snapshot(clean.path, "p")
    statements = counting.steps
    assert statements > 10  # the batch really takes many steps

    path = tmp_path / "faults.sqlite3"
    store = open_store(path)
    faults = Faults()
    faults.wrap(store.file)
    for n in range(1, statements + 1):
        project = f"p{n}"
        seed(store, project)
        before = snapshot(path, project)
        faults.steps, faults.fail_at = 0, n
        with pytest.raises(InjectedFault):
            write(store, project)
        assert snapshot(path, project) == before, f"statement {n} left part of the batch"
        assert not store.file.db().in_transaction
        faults.fail_at = None
        write(store, project)  # the client's retry, same ids
        assert snapshot(path, project) == expected, f"retry after statement {n}"
        write(store, project)  # a duplicate delivery
        assert snapshot(path, project) == expected


DIMS = 3


class Embedder:
    name = "test"
    dimensions = DIMS

    def __init__(self) -> None:
        self.failing = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.failing:
            raise RuntimeError("the model is down")
        return [[1.0, float(len(t) % 7), 0.5] for t in texts]


def passage_ids(path: Path, project: str) -> set[str]:
    db = sqlite3.connect(path)
    try:
        return {r[0] for r in db.execute("SELECT id FROM passages WHERE project = ?", (project,))}
    finally:
        db.close()


def vector_ids(path: Path, project: str, kind: str) -> set[str]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT id FROM vectors WHERE project = ? AND kind = ?", (project, kind))
        return {r[0] for r in rows}
    finally:
        db.close()


def searchable(index: SqliteVectorIndex, project: str) -> set[str]:
    return {h.id for h in index.search(project, "passage", [1.0, 0.0, 0.0], 1_000)}


def test_indexing_failing_at_any_statement_keeps_the_marks_until_a_retry(tmp_path: Path) -> None:
    path = tmp_path / "worker.sqlite3"
    store = open_store(path)
    embedder = Embedder()
    index = SqliteVectorIndex(path, DIMS)
    memory = Memory(store, Limits(), semantic=Semantic(embedder, index))
    worker = Worker(memory)
    faults = Faults()
    faults.wrap(store.file)
    faults.wrap(index.file)

    # Count the steps of one clean pass (store and index share the counter).
    write_messages(store, "clean")
    faults.steps = 0
    assert worker.run_once() is True
    statements = faults.steps
    passages = passage_ids(path, "clean")
    assert len(passages) > 4
    assert vector_ids(path, "clean", "passage") == passages
    assert statements > 5

    for n in range(1, statements + 1):
        project = f"p{n}"
        write_messages(store, project)
        assert passage_ids(path, project) == passages
        assert searchable(index, project) == set()  # the in-memory matrix is loaded
        faults.steps, faults.fail_at = 0, n
        # The worker's pass: whatever step fails, it logs it and never raises.
        worker.run_once()
        faults.fail_at = None
        pending = {v.id for v in store.pending_vectors(project, 1_000) if v.kind == "passage"}
        stored = vector_ids(path, project, "passage")
        # Every passage is either indexed or still marked: none is lost.
        assert pending | stored == passages, f"statement {n}"
        # Another write lands before the retry: the in-memory matrix must follow the
        # file, not a transaction that was rolled back.
        index.upsert(project, "passage", [VectorItem("other", [0.0, 1.0, 0.0], "user")])
        assert searchable(index, project) == vector_ids(path, project, "passage")
        index.delete(project, "passage", ["other"])
        assert worker.run_once() is True  # the retry
        assert store.pending_vectors(project, 1_000) == []
        assert vector_ids(path, project, "passage") == passages
        assert searchable(index, project) == passages

    # A model that is down leaves every mark in place.
    write_messages(store, "down")
    embedder.failing = True
    assert memory.index_pending("down") == 0
    assert {v.id for v in store.pending_vectors("down", 1_000)} >= passages
    embedder.failing = False
    assert memory.index_pending("down") > 0
    assert vector_ids(path, "down", "passage") == passages
