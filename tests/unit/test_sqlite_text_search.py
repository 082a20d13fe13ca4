"""The embedded index's passage text search, which takes ids, roles and positions from
its matrix by the text index's row numbers, returns exactly what the plain SQL search
returns (ids, roles, ties by id), across writes by this process and by another one."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from taisce.adapters.sqlite.vectors import SqliteVectorIndex, _match_query, _scope
from taisce.domain.model import Hit, VectorItem

DIMS = 4
_WORDS = ["galway", "cork", "pottery", "camping", "lake", "Ülle", "zoë", "kids"]
_texts = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=5).map(" ".join)
_ROLES = ["user", "assistant", "tool"]
# One write: (item number, text or None to delete it, role, position).
_writes = st.lists(
    st.tuples(st.integers(0, 11), st.one_of(st.none(), _texts), st.sampled_from(_ROLES)),
    min_size=1,
    max_size=25,
)


def _plain(index: SqliteVectorIndex, text: str, k: int, roles: list[str] | None) -> list[Hit]:
    """The search as one SQL statement (the form used for every other kind)."""
    query = _match_query(_scope("p", "passage"), text)
    if query is None:
        return []
    sql = "SELECT id, bm25(vector_text) AS rank FROM vector_text WHERE vector_text MATCH ?"
    params: list[object] = [query]
    if roles is not None:
        sql += f" AND role IN ({','.join('?' * len(roles))})"
        params += roles
    rows = index.file.db().execute(sql + " ORDER BY rank, id LIMIT ?", (*params, k)).fetchall()
    matrix = index._matrix("p", "passage")
    return [Hit(r[0], -float(r[1]), matrix.positions[matrix.where[r[0]]]) for r in rows]


def _apply(index: SqliteVectorIndex, n: int, text: str | None, role: str) -> None:
    # Ids of two spellings, so that ties are broken by id in both orders.
    item_id = f"m{n % 4}-{n}#0" if n % 2 else f"M{n}#0"
    if text is None:
        index.delete("p", "passage", [item_id])
    else:
        vector = list(np.ones(DIMS, np.float32))
        index.upsert("p", "passage", [VectorItem(item_id, vector, role, text, n * 10)])


@settings(max_examples=150, deadline=None)
@given(
    _writes,
    _writes,
    _texts,
    st.integers(1, 8),
    st.one_of(st.none(), st.lists(st.sampled_from(_ROLES), min_size=1, unique=True)),
)
def test_passage_text_search_is_the_plain_search(
    mine: list[tuple[int, str | None, str]],
    theirs: list[tuple[int, str | None, str]],
    question: str,
    k: int,
    roles: list[str] | None,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "v.sqlite3"
        index, other = SqliteVectorIndex(path, DIMS), SqliteVectorIndex(path, DIMS)
        try:
            for n, text, role in mine:
                _apply(index, n, text, role)
                # Searched between writes: the row numbers it keeps must follow them.
                assert index.search_text("p", "passage", question, k, roles) == _plain(
                    index, question, k, roles
                )
            query = _match_query(_scope("p", "passage"), question)
            # Nothing changes now: the search takes the matrix's row numbers, not SQL alone.
            assert query is None or index._passage_text("p", query, k, roles) is not None
            for n, text, role in theirs:  # another process writes the same file
                _apply(other, n, text, role)
            assert index.search_text("p", "passage", question, k, roles) == _plain(
                index, question, k, roles
            )
        finally:
            index.close()
            other.close()


def test_text_in_the_form_before_latin_stems_gains_them_when_opened(tmp_path: Path) -> None:
    # A file in form 1 (Han apart, stems for other scripts only): a Spanish note held
    # as written, which "llaman" does not reach ("llama" and "llaman" share "llam").
    path = tmp_path / "vectors.sqlite3"
    index = SqliteVectorIndex(path, DIMS)
    vector = list(np.ones(DIMS, np.float32))
    note = "Tengo un gato negro que se llama Max."
    index.upsert("p", "passage", [VectorItem("m0#0", vector, "user", note, 0)])
    with index.file.write() as db:
        db.execute("UPDATE vector_text SET text = ? WHERE id = 'm0#0'", (note,))
        db.execute("UPDATE vector_text_form SET version = 1")
    assert index.search_text("p", "passage", "¿Cómo se llaman?", 5) == []
    index.close()

    reopened = SqliteVectorIndex(path, DIMS)
    assert [h.id for h in reopened.search_text("p", "passage", "¿Cómo se llaman?", 5)] == ["m0#0"]
    texts = dict(reopened.file.db().execute("SELECT id, text FROM vector_text").fetchall())
    assert texts == {"m0#0": f"{note} gat llam negr teng"}
    reopened.close()


def test_text_indexed_in_the_older_form_is_formed_once_when_opened(tmp_path: Path) -> None:
    # A file written before the text form (domain/search_text.py): Japanese held as one
    # run, which no question of other words matches.
    path = tmp_path / "vectors.sqlite3"
    index = SqliteVectorIndex(path, DIMS)
    vector = list(np.ones(DIMS, np.float32))
    index.upsert("p", "passage", [VectorItem("m0#0", vector, "user", "大阪で歯医者の予約", 0)])
    index.upsert("p", "passage", [VectorItem("m1#0", vector, "user", "Dana moved to Galway", 1)])
    with index.file.write() as db:
        db.execute("UPDATE vector_text SET text = '大阪で歯医者の予約' WHERE id = 'm0#0'")
        db.execute("DELETE FROM vector_text_form")
    assert [h.id for h in index.search_text("p", "passage", "歯医者はいつ", 5)] == []
    index.close()

    reopened = SqliteVectorIndex(path, DIMS)
    assert [h.id for h in reopened.search_text("p", "passage", "歯医者はいつ", 5)] == ["m0#0"]
    assert [h.id for h in reopened.search_text("p", "passage", "Galway", 5)] == ["m1#0"]
    texts = dict(reopened.file.db().execute("SELECT id, text FROM vector_text").fetchall())
    assert texts == {"m0#0": " 大 阪 で 歯 医 者 の 予 約 ", "m1#0": "Dana moved to Galway"}
    reopened.close()
