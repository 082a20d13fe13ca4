"""The VectorIndex port on the embedded index: a real SQLite file and numpy."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.domain.model import VectorItem
from taisce.domain.ports.vectors import VectorIndexError

DIMS = 8


def unit(*values: float) -> list[float]:
    v = np.zeros(DIMS, np.float32)
    v[: len(values)] = values
    return list(v / np.linalg.norm(v))


@pytest.fixture
def index(tmp_path: Path) -> SqliteVectorIndex:
    return SqliteVectorIndex(tmp_path / "v.sqlite3", DIMS)


def test_nearest_first_with_scores(index: SqliteVectorIndex) -> None:
    index.upsert(
        "p",
        "passage",
        [
            VectorItem("a", unit(1, 0), "user"),
            VectorItem("b", unit(1, 1), "user"),
            VectorItem("c", unit(0, 1), "tool"),
        ],
    )
    hits = index.search("p", "passage", unit(1, 0.1), k=3)
    assert [h.id for h in hits] == ["a", "b", "c"]
    assert hits[0].score == pytest.approx(float(np.dot(unit(1, 0), unit(1, 0.1))), abs=1e-6)
    assert [h.id for h in index.search("p", "passage", unit(1, 0.1), k=2)] == ["a", "b"]


def test_roles_filter_and_projects_and_kinds_are_apart(index: SqliteVectorIndex) -> None:
    index.upsert(
        "p", "passage", [VectorItem("a", unit(1), "tool"), VectorItem("b", unit(0, 1), "user")]
    )
    index.upsert("q", "passage", [VectorItem("z", unit(1), "user")])
    index.upsert("p", "report", [VectorItem("r", unit(1), "user")])
    assert [h.id for h in index.search("p", "passage", unit(1), 5, roles=["user"])] == ["b"]
    assert [h.id for h in index.search("p", "passage", unit(1), 5, roles=["system"])] == []
    assert [h.id for h in index.search("q", "passage", unit(1), 5)] == ["z"]
    assert [h.id for h in index.search("p", "report", unit(1), 5)] == ["r"]
    assert index.search("nobody", "passage", unit(1), 5) == []


def test_upsert_replaces_and_delete_removes(index: SqliteVectorIndex) -> None:
    index.upsert("p", "entity", [VectorItem(f"e{i}", unit(1, i)) for i in range(40)])
    index.upsert("p", "entity", [VectorItem("e0", unit(0, 0, 1))])
    assert index.search("p", "entity", unit(0, 0, 1), 1)[0].id == "e0"
    index.delete("p", "entity", ["e0", "e5", "missing"])
    ids = {h.id for h in index.search("p", "entity", unit(1), 100)}
    assert ids == {f"e{i}" for i in range(40)} - {"e0", "e5"}


def test_another_process_writes_are_seen_and_data_persists(tmp_path: Path) -> None:
    first = SqliteVectorIndex(tmp_path / "v.sqlite3", DIMS)
    second = SqliteVectorIndex(tmp_path / "v.sqlite3", DIMS)
    first.upsert("p", "passage", [VectorItem("a", unit(1), "user")])
    assert [h.id for h in second.search("p", "passage", unit(1), 5)] == ["a"]
    second.upsert("p", "passage", [VectorItem("b", unit(1, 0.5), "user")])
    second.delete("p", "passage", ["a"])
    assert [h.id for h in first.search("p", "passage", unit(1), 5)] == ["b"]
    first.close()
    reopened = SqliteVectorIndex(tmp_path / "v.sqlite3", DIMS)
    assert [h.id for h in reopened.search("p", "passage", unit(1), 5)] == ["b"]


def test_wrong_dimensions_are_an_index_error(index: SqliteVectorIndex) -> None:
    with pytest.raises(VectorIndexError):
        index.upsert("p", "passage", [VectorItem("a", [1.0, 0.0], "user")])
    with pytest.raises(VectorIndexError):
        index.search("p", "passage", [1.0], 3)


def test_text_search_ranks_by_words_within_one_project_and_kind(
    index: SqliteVectorIndex,
) -> None:
    index.upsert(
        "p",
        "passage",
        [
            VectorItem("a", unit(1), "user", "Dana moved to Galway in March."),
            VectorItem("b", unit(1), "tool", "The Galway office opened in 2019; Galway grows."),
            VectorItem("c", unit(1), "user", "Nothing to see here."),
        ],
    )
    index.upsert("q", "passage", [VectorItem("z", unit(1), "user", "Galway Galway Galway")])
    index.upsert("p", "report", [VectorItem("r", unit(1), "user", "Galway report")])
    hits = index.search_text("p", "passage", "Who is moving to Galway?", 5)
    assert [h.id for h in hits][:2] == ["a", "b"] or [h.id for h in hits][:2] == ["b", "a"]
    assert {h.id for h in hits} == {"a", "b"}  # stemming: moving ~ moved
    assert [h.id for h in index.search_text("p", "passage", "moving", 5)] == ["a"]
    assert [h.id for h in index.search_text("p", "passage", "Galway", 5, ["user"])] == ["a"]
    assert index.search_text("p", "passage", "the of and", 5) == []  # only common words
    assert index.search_text("p", "passage", '"); DROP TABLE vectors; --', 5) == []
    index.delete("p", "passage", ["a"])
    assert [h.id for h in index.search_text("p", "passage", "Galway", 5)] == ["b"]
    index.upsert("p", "passage", [VectorItem("b", unit(1), "tool", "Replaced text about Cork.")])
    assert index.search_text("p", "passage", "Galway", 5) == []
    assert [h.id for h in index.search_text("p", "passage", "Cork", 5)] == ["b"]


def test_the_store_marks_vectors_only_when_asked(tmp_path: Path) -> None:
    from taisce.adapters.sqlite.store import SqliteStore
    from taisce.domain.ingest import MessageIn, make_message, split_passages

    message = make_message(
        MessageIn(id="m1", role="user", content="Hello there."), "2026-01-01T00:00:00Z"
    )
    marking = SqliteStore(tmp_path / "a.sqlite3")
    marking.put_messages("p", [message], split_passages(message))
    assert [v.id for v in marking.pending_vectors("p", 10)] == ["m1#0"]
    quiet = SqliteStore(tmp_path / "b.sqlite3", mark_vectors=False)
    quiet.put_messages("p", [message], split_passages(message))
    assert quiet.pending_vectors("p", 10) == []
    assert quiet.vector_projects() == []


def test_similarities_score_exactly_the_items_asked(index: SqliteVectorIndex) -> None:
    index.upsert(
        "p",
        "fact",
        [VectorItem("a", unit(1, 0), "user"), VectorItem("b", unit(0, 1), "tool")],
    )
    index.upsert("q", "fact", [VectorItem("a", unit(0, 1), "user")])
    query = unit(1, 1)
    got = index.similarities("p", "fact", query, ["b", "a", "missing", "a"])
    assert set(got) == {"a", "b"}  # an item without a vector is left out
    assert got["a"] == pytest.approx(float(np.dot(unit(1, 0), query)), abs=1e-6)
    assert got["b"] == pytest.approx(float(np.dot(unit(0, 1), query)), abs=1e-6)
    # Another project's or kind's vector of the same id is not read.
    assert index.similarities("q", "fact", unit(1, 0), ["a"]) == {"a": pytest.approx(0.0)}
    assert index.similarities("p", "passage", query, ["a"]) == {}
    assert index.similarities("p", "fact", query, []) == {}


def test_passage_hits_carry_position_and_time_and_an_older_file_gains_them(
    tmp_path: Path,
) -> None:
    # A vectors table as a file made before positions and messages' times were kept.
    path = tmp_path / "v.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE vectors (project TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, "
            "role TEXT, vector BLOB NOT NULL, PRIMARY KEY (project, kind, id)) WITHOUT ROWID"
        )
        old = np.asarray(unit(1, 0.2), np.float32).tobytes()
        db.execute("INSERT INTO vectors VALUES ('p', 'passage', 'old#0', 'user', ?)", (old,))
    index = SqliteVectorIndex(path, DIMS)
    index.upsert(
        "p",
        "passage",
        [
            VectorItem("a#0", unit(1), "user", "Mel painted a sunrise", 3, "2023-10-20T18:00:00Z"),
            VectorItem("b#0", unit(1, 0.5), "user", "Mel painted a lake", 4, ""),  # no time
        ],
    )
    hits = {h.id: h for h in index.search("p", "passage", unit(1), 5)}
    # "" the message holds no time; None the entry carries none (written before).
    assert [(hits[i].position, hits[i].occurred_at) for i in ("a#0", "b#0", "old#0")] == [
        (3, "2023-10-20T18:00:00Z"),
        (4, ""),
        (None, None),
    ]
    words = {h.id: h.occurred_at for h in index.search_text("p", "passage", "Mel painted", 5)}
    assert words == {"a#0": "2023-10-20T18:00:00Z", "b#0": ""}
    index.close()
    # Read back from the file by another opening (not the matrix kept in memory).
    again = SqliteVectorIndex(path, DIMS)
    assert {h.id: h.occurred_at for h in again.search("p", "passage", unit(1), 5)} == {
        "a#0": "2023-10-20T18:00:00Z",
        "b#0": "",
        "old#0": None,
    }
    again.close()


def test_a_user_searches_the_shared_vectors_and_their_own_only(index: SqliteVectorIndex) -> None:
    from taisce.domain.scope import Scope

    shared, alice, bob = "p", Scope("p", "alice"), Scope("p", "bob")
    index.upsert(shared, "passage", [VectorItem("s", unit(1, 0.2), "user", text="tea shared")])
    index.upsert(alice, "passage", [VectorItem("a", unit(1, 0.1), "user", text="tea alice")])
    index.upsert(bob, "passage", [VectorItem("b", unit(1), "user", text="tea bob")])
    # Bob's is the nearest, and never found outside his scope.
    assert [h.id for h in index.search(alice, "passage", unit(1), 5)] == ["a", "s"]
    assert [h.id for h in index.search(alice, "passage", unit(1), 1)] == ["a"]
    assert [h.id for h in index.search(bob, "passage", unit(1), 5)] == ["b", "s"]
    assert [h.id for h in index.search(shared, "passage", unit(1), 5)] == ["s"]
    assert {h.id for h in index.search_text(alice, "passage", "tea", 5)} == {"a", "s"}
    assert {h.id for h in index.search_text(shared, "passage", "tea", 5)} == {"s"}
    assert set(index.similarities(alice, "passage", unit(1), ["a", "b", "s"])) == {"a", "s"}


def test_erasing_a_user_deletes_their_vectors_and_keeps_the_others(tmp_path: Path) -> None:
    from taisce.adapters.sqlite.store import SqliteStore
    from taisce.domain.model import ErasureRecord
    from taisce.domain.scope import Scope

    path = tmp_path / "taisce.sqlite3"
    store = SqliteStore(path)
    index = SqliteVectorIndex(path, DIMS)
    alice, bob = Scope("p", "alice"), Scope("p", "bob")
    index.upsert(alice, "passage", [VectorItem("a", unit(1), "user", text="secretword")])
    index.upsert(bob, "passage", [VectorItem("b", unit(1), "user", text="bobword")])
    index.upsert("p", "passage", [VectorItem("s", unit(1), "user", text="sharedword")])
    record = ErasureRecord("era_" + "0" * 32, "p", "h", "2026-01-01T00:00:00Z")
    store.erase_scope(str(alice), "h", record)
    assert [h.id for h in index.search(alice, "passage", unit(1), 5)] == ["s"]
    assert index.search_text(alice, "passage", "secretword", 5) == []
    assert [h.id for h in index.search(bob, "passage", unit(1), 5)] == ["b", "s"]
    index.close()
    store.close()
    assert b"secretword" not in path.read_bytes()
