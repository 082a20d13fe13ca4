"""Reindexing (`taisce reindex`): a store that kept no vector marks (no model was
configured) marks everything of a project on request, the same way in both stores:
every passage, every live name per role, and every entity for a report rebuild. On
DynamoDB this reads the project's listings, never a Scan (tests/conftest.py checks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.sqlite.store import SqliteStore
from tests.contract.factories import fact, message, unique, with_passages
from tests.moto_server import shared_moto


def _without_marks(kind: str, place: Path) -> Any:
    if kind == "sqlite":
        return SqliteStore(place / "r.sqlite3", mark_vectors=False)
    moto = shared_moto()
    return DynamoDbStore(moto.table, client=moto.shared_client, mark_vectors=False)


@pytest.mark.parametrize("kind", ["sqlite", "dynamodb"])
def test_mark_everything_marks_passages_names_and_entities(kind: str, tmp_path: Path) -> None:
    store = _without_marks(kind, tmp_path)
    project, other = unique("reindex"), unique("reindex-other")
    store.put_messages(project, *with_passages(message("Atlas likes tea.", id="m1")))
    store.put_facts(project, [fact("Atlas", "works at", "Acme", id="f1")])
    store.put_facts(project, [fact("Atlas", "uses", "Grep", id="f2", role="tool")])
    store.put_facts(other, [fact("Bob", "knows", "Carol", id="f3")])
    store.clear_dirty(project, store.dirty_entities(project))
    assert store.pending_vectors(project, 100) == []

    # a passage; two fact statements; atlas, acme (user); atlas, grep (tool)
    assert store.mark_everything(project) == 7
    pending = {(v.kind, v.id, v.text, v.role) for v in store.pending_vectors(project, 100)}
    assert pending == {
        ("passage", "m1#0", "Atlas likes tea.", "user"),
        ("fact", "f1", "Atlas works at Acme", "user"),
        ("fact", "f2", "Atlas uses Grep", "tool"),
        ("entity", "user:atlas", "Atlas", "user"),
        ("entity", "user:acme", "Acme", "user"),
        ("entity", "tool:atlas", "Atlas", "tool"),
        ("entity", "tool:grep", "Grep", "tool"),
    }
    # The passage's mark carries its message's time, as a mark written on storing does.
    (passage,) = [v for v in store.pending_vectors(project, 100) if v.kind == "passage"]
    assert passage.occurred_at == message("x").occurred_at
    assert project in store.vector_projects()
    dirty = {(role, key) for role, key, _ in store.dirty_entities(project)}
    assert dirty == {("user", "atlas"), ("user", "acme"), ("tool", "atlas"), ("tool", "grep")}
    assert store.pending_vectors(other, 100) == []  # only the project asked for
    # Marking again adds nothing.
    store.mark_everything(project)
    assert len(store.pending_vectors(project, 100)) == 7
