"""A SQLite file made before facts had quote offsets opens, gains the columns, and
keeps its facts."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.names import normalize_name
from tests.contract.factories import fact

# The facts table as schema 5 made it.
_OLD_FACTS = """
CREATE TABLE facts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, project TEXT NOT NULL, id TEXT NOT NULL,
    subject TEXT NOT NULL, subject_key TEXT NOT NULL, predicate TEXT NOT NULL,
    object TEXT NOT NULL, object_kind TEXT NOT NULL, object_key TEXT,
    statement TEXT NOT NULL, source_role TEXT NOT NULL, quote TEXT, context TEXT,
    message_id TEXT, valid_from TEXT, valid_to TEXT, recorded_at TEXT NOT NULL,
    UNIQUE (project, id)
);
INSERT INTO facts (project, id, subject, subject_key, predicate, object, object_kind,
    object_key, statement, source_role, recorded_at)
VALUES ('p', 'old-1', 'Atlas', 'atlas', 'works at', 'Acme', 'entity', 'acme',
    'Atlas works at Acme', 'user', '2024-05-01T12:00:00Z');
"""


def test_an_older_file_gains_the_quote_offset_columns(tmp_path: Path) -> None:
    path = tmp_path / "taisce.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(_OLD_FACTS)
    store = SqliteStore(path)
    (old,) = store.facts_with_subject("p", "atlas")
    assert old.id == "old-1" and old.quote_start is None and old.quote_end is None
    new = fact("Atlas", "says", "hello", quote="hello", quote_start=0, quote_end=5)
    store.put_facts("p", [new])
    assert store.facts_with_subject("p", normalize_name("Atlas"))[1] == new
    store.close()
    # Opening it again (columns already there) changes nothing.
    again = SqliteStore(path)
    assert [f.id for f in again.facts_with_subject("p", "atlas")] == ["old-1", new.id]
    again.close()
