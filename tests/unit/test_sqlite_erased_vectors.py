"""A data folder written by an older version kept the ids of erased vectors (an entity's
id holds its name) in `erased_vectors`, never cleared without a model: opening the store
deletes those vectors and rows and purges the file."""

from __future__ import annotations

from pathlib import Path

from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.model import VectorItem


def folder_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file())


def test_ids_an_older_version_left_are_drained_when_the_store_opens(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store, index = SqliteStore(path), SqliteVectorIndex(path, 2)
    index.upsert("p", "entity", [VectorItem("user:xanthe morrow", [1.0, 0.0], "user", "Xanthe")])
    index.upsert("p", "entity", [VectorItem("user:maya okafor", [0.0, 1.0], "user", "Maya")])
    store.file.db().execute(
        "INSERT INTO erased_vectors (project, kind, id) VALUES (?, ?, ?)",
        ("p", "entity", "user:xanthe morrow"),
    )
    index.close()
    store.close()
    assert b"xanthe" in folder_bytes(tmp_path).lower()

    reopened = SqliteStore(path)

    assert reopened.erased_vectors("p") == []
    index = SqliteVectorIndex(path, 2)
    assert [h.id for h in index.search("p", "entity", [1.0, 1.0], 10)] == ["user:maya okafor"]
    assert b"xanthe" not in folder_bytes(tmp_path).lower()  # while the store is open
    index.close()
    reopened.close()
