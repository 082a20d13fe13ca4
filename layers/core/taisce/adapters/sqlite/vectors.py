"""The embedded vector index: exact cosine search with numpy, persisted in the
SQLite file beside the store.

Rows live in SQLite (float32 blobs); each (project, kind) is searched from an
in-memory matrix loaded on first use. A version per (project, kind), bumped in the
same transaction as every write, tells a process when another one has written, so
its matrix is reloaded; its own writes are applied to the matrix in place. Exact
search over float32 rows is fast to ~10^5 vectors per project and kind.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...domain.model import Hit, Role, VectorItem, VectorKind
from ...domain.ports.vectors import VectorIndexError
from ...domain.scope import best_hits, partitions
from ...domain.search_text import asked_form, search_form
from .file import SqliteFile, add_columns

if TYPE_CHECKING:
    import numpy as np

    from .matrix import Matrix

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    role TEXT,
    vector BLOB NOT NULL,
    PRIMARY KEY (project, kind, id)
) WITHOUT ROWID;
-- The lexical side of hybrid search: BM25 over the items' text (porter stemming).
-- `scope` holds one token per (project, kind), so a match is narrowed by the index
-- to one project's items rather than filtered after matching every project's.
CREATE VIRTUAL TABLE IF NOT EXISTS vector_text USING fts5(
    scope, text, id UNINDEXED, role UNINDEXED,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS vector_text_rows (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    row INTEGER NOT NULL,
    PRIMARY KEY (project, kind, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vector_versions (
    project TEXT NOT NULL,
    kind TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (project, kind)
) WITHOUT ROWID;
-- The form the indexed text is in (one row; domain/search_text.py): a file written in
-- an older form is formed again when opened.
CREATE TABLE IF NOT EXISTS vector_text_form (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    version INTEGER NOT NULL
);
-- The model that made the vectors (one row): vectors of two models do not compare.
CREATE TABLE IF NOT EXISTS vector_model (
    one INTEGER PRIMARY KEY CHECK (one = 1),
    model TEXT NOT NULL
);
"""


# Words too common to rank by; the rest of the question is matched with OR.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "she",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)
_WORD = re.compile(r"\w+")


def _scope(project: str, kind: str) -> str:
    return (
        "s" + hashlib.sha1(f"{project}\x1f{kind}".encode(), usedforsecurity=False).hexdigest()[:20]
    )


# The form of indexed text (domain/search_text.py): 2, stems added for the words of a
# text taken to be in another language in Latin letters; 1, Han and hiragana written
# apart and stems added for Korean, Russian, Greek, Arabic, Hindi and Tamil words; none
# recorded, the text as written.
TEXT_FORM = 2


def _match_query(scope: str, text: str) -> str | None:
    asked = asked_form(text).casefold()
    words = dict.fromkeys(w for w in _WORD.findall(asked) if w not in _STOPWORDS)
    if not words:
        return None
    terms = " OR ".join('"' + w.replace('"', "") + '"' for w in words)
    return f"scope:{scope} AND ({terms})"


def _drop_text(db: sqlite3.Connection, project: str, kind: str, ids: list[str]) -> None:
    for item_id in ids:
        row = db.execute(
            "DELETE FROM vector_text_rows WHERE project = ? AND kind = ? AND id = ? RETURNING row",
            (project, kind, item_id),
        ).fetchone()
        if row is not None:
            db.execute("DELETE FROM vector_text WHERE rowid = ?", (row[0],))


def _bump(db: sqlite3.Connection, project: str, kind: str) -> int:
    row = db.execute(
        "INSERT INTO vector_versions (project, kind, version) VALUES (?, ?, 1) "
        "ON CONFLICT (project, kind) DO UPDATE SET version = version + 1 "
        "RETURNING version",
        (project, kind),
    ).fetchone()
    return int(row[0])


def delete_rows(db: sqlite3.Connection, project: str, kind: str, ids: list[str]) -> int:
    """Delete these items' vectors and indexed text inside the caller's transaction
    (the embedded store erases them with what they index); returns the new version,
    which makes every process reload its matrix of (project, kind)."""
    db.executemany(
        "DELETE FROM vectors WHERE project = ? AND kind = ? AND id = ?",
        [(project, kind, i) for i in ids],
    )
    _drop_text(db, project, kind, ids)
    return _bump(db, project, kind)


def held_in(db: sqlite3.Connection) -> bool:
    """Whether this file holds the vector index's tables (embeddings were on once)."""
    return (
        db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_text'"
        ).fetchone()
        is not None
    )


def purge_text(db: sqlite3.Connection) -> None:
    """Merge the full-text index into one b-tree ('optimize'): a deleted row leaves
    its terms in older segments, and delete markers naming them, until a merge drops
    both. With secure_delete the segments it replaces are zeroed. Costs a rewrite of
    the whole index, so it runs after an erasure, not after every delete."""
    db.execute("INSERT INTO vector_text (vector_text) VALUES ('optimize')")


def _blob(vector: Sequence[float], dimensions: int) -> np.ndarray:
    # numpy (and the matrix) only once a vector is written or searched: every `taisce`
    # command and every local handler process opens this index, and numpy is a third
    # of their start when no model is set.
    import numpy as np

    array = np.asarray(vector, dtype=np.float32)
    if array.shape != (dimensions,):
        raise VectorIndexError(f"a vector must have {dimensions} dimensions")
    return array


class SqliteVectorIndex:
    def __init__(self, path: Path | str, dimensions: int) -> None:
        self.file = SqliteFile(path, _SCHEMA)
        # A file made before positions (or messages' times) were kept: its vectors have
        # none (NULL: not carried, VectorItem.occurred_at).
        add_columns(self.file.db(), "vectors", (("position", "INTEGER"), ("occurred_at", "TEXT")))
        self._form_text()
        self.dimensions = dimensions
        self._lock = threading.Lock()
        self._matrices: dict[tuple[str, str], Matrix] = {}

    def _form_text(self) -> None:
        """Bring text indexed in an older form to TEXT_FORM (once per file): the rows
        whose text the form changes (Chinese, Japanese, Korean) are written again."""
        db = self.file.db()
        row = db.execute("SELECT version FROM vector_text_form WHERE one = 1").fetchone()
        if row is not None and row[0] >= TEXT_FORM:
            return
        with self.file.write() as db:
            # Another process may have formed it meanwhile: forming applies once.
            row = db.execute("SELECT version FROM vector_text_form WHERE one = 1").fetchone()
            if row is not None and row[0] >= TEXT_FORM:
                return
            # Read through once (a large index is not held in memory), keeping only the
            # rows the form changes, then write those.
            changed = [
                (formed, rowid)
                for rowid, text in db.execute("SELECT rowid, text FROM vector_text")
                if (formed := search_form(text)) != text
            ]
            db.executemany("UPDATE vector_text SET text = ? WHERE rowid = ?", changed)
            db.execute(
                "INSERT INTO vector_text_form (one, version) VALUES (1, ?) "
                "ON CONFLICT (one) DO UPDATE SET version = excluded.version",
                (TEXT_FORM,),
            )

    def recorded_model(self) -> str | None:
        """The model recorded as making this index's vectors (None: none recorded)."""
        row = self.file.db().execute("SELECT model FROM vector_model WHERE one = 1").fetchone()
        return None if row is None else str(row[0])

    def adopt_model(self, model: str) -> int | None:
        """Record `model` as the one that makes this index's vectors. If another model
        made the vectors held, they are deleted (the caller has marked everything for
        the worker to embed again) and their count returned; None when none were. A
        folder written before models were recorded is taken as this model's."""
        with self._lock:
            with self.file.write() as db:
                row = db.execute("SELECT model FROM vector_model WHERE one = 1").fetchone()
                if row is not None and row[0] == model:
                    return None
                db.execute(
                    "INSERT INTO vector_model (one, model) VALUES (1, ?) "
                    "ON CONFLICT (one) DO UPDATE SET model = excluded.model",
                    (model,),
                )
                if row is None:
                    return None
                scopes = db.execute("SELECT DISTINCT project, kind FROM vectors").fetchall()
                dropped = db.execute("DELETE FROM vectors").rowcount
                for project, kind in scopes:
                    _bump(db, project, kind)
            self._matrices.clear()
            return dropped

    def upsert(self, project: str, kind: VectorKind, items: Sequence[VectorItem]) -> None:
        if not items:
            return
        arrays = [_blob(item.vector, self.dimensions) for item in items]
        with self._lock:
            with self.file.write() as db:
                db.executemany(
                    "INSERT INTO vectors (project, kind, id, role, vector, position, occurred_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project, kind, id) DO UPDATE SET "
                    "role = excluded.role, vector = excluded.vector, "
                    "position = excluded.position, occurred_at = excluded.occurred_at",
                    [
                        (
                            project,
                            kind,
                            item.id,
                            item.role,
                            array.tobytes(),
                            item.position,
                            item.occurred_at,
                        )
                        for item, array in zip(items, arrays, strict=True)
                    ],
                )
                _drop_text(db, project, kind, [item.id for item in items])
                scope = _scope(project, kind)
                for item in items:
                    if item.text:
                        row = db.execute(
                            "INSERT INTO vector_text (scope, text, id, role) VALUES (?, ?, ?, ?)",
                            (scope, search_form(item.text), item.id, item.role),
                        ).lastrowid
                        db.execute(
                            "INSERT INTO vector_text_rows (project, kind, id, row) "
                            "VALUES (?, ?, ?, ?)",
                            (project, kind, item.id, row),
                        )
                version = _bump(db, project, kind)
            # Only once committed: a failed COMMIT must not leave the matrix holding
            # rows the file does not (a later write's version would then match it).
            matrix = self._matrices.get((project, kind))
            if matrix is not None and matrix.version == version - 1:
                for item, array in zip(items, arrays, strict=True):
                    matrix.put(item.id, array, item.role, item.position, item.occurred_at)
                matrix.version = version

    def delete(self, project: str, kind: VectorKind, ids: Collection[str]) -> None:
        wanted = list(ids)
        if not wanted:
            return
        with self._lock:
            with self.file.write() as db:
                version = delete_rows(db, project, kind, wanted)
            # Only once committed: a failed COMMIT must not leave the matrix holding
            # rows the file does not (a later write's version would then match it).
            matrix = self._matrices.get((project, kind))
            if matrix is not None and matrix.version == version - 1:
                for item_id in wanted:
                    matrix.remove(item_id)
                matrix.version = version

    def purge(self) -> None:
        with self._lock:
            with self.file.write() as db:
                purge_text(db)
            self.file.purge()

    @staticmethod
    def _version(db: sqlite3.Connection, project: str, kind: str) -> int:
        row = db.execute(
            "SELECT version FROM vector_versions WHERE project = ? AND kind = ?", (project, kind)
        ).fetchone()
        return int(row[0]) if row else 0

    def _matrix(self, project: str, kind: str) -> Matrix:
        import numpy as np

        from .matrix import Matrix

        db = self.file.db()
        version = self._version(db, project, kind)
        with self._lock:
            matrix = self._matrices.get((project, kind))
            if matrix is not None and matrix.version == version:
                return matrix
            matrix = Matrix(self.dimensions)
            for item_id, role, blob, position, occurred_at in db.execute(
                "SELECT id, role, vector, position, occurred_at FROM vectors "
                "WHERE project = ? AND kind = ?",
                (project, kind),
            ):
                vector = np.frombuffer(blob, dtype=np.float32)
                matrix.put(item_id, vector, role, position, occurred_at)
            matrix.version = version
            self._matrices[(project, kind)] = matrix
            return matrix

    def _search_one(
        self,
        project: str,
        kind: VectorKind,
        vector: Sequence[float],
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        import numpy as np

        query = _blob(vector, self.dimensions)
        matrix = self._matrix(project, kind)
        with self._lock:
            count = len(matrix.ids)
            if count == 0 or k <= 0:
                return []
            scores = matrix.rows[:count] @ query
            if roles is not None:
                allowed = matrix.admitted(roles)
                scores = np.where(allowed, scores, -np.inf)
            take = min(k, count)
            top = np.argpartition(-scores, take - 1)[:take]
            top = top[np.isfinite(scores[top])]
            # Whole arrays to Python at once: per-element numpy scalars are slow.
            ids, positions, times = matrix.ids, matrix.positions, matrix.times
            rows = top.tolist()
            # Best first, ties by id, sorted as plain tuples (no key function per hit);
            # ids are unique, so the row number never decides.
            order = sorted(
                zip([-s for s in scores[top].tolist()], [ids[i] for i in rows], rows, strict=True)
            )
            return [Hit(item_id, -negated, positions[i], times[i]) for negated, item_id, i in order]

    def _similarities_one(
        self, project: str, kind: VectorKind, vector: Sequence[float], ids: Collection[str]
    ) -> dict[str, float]:
        query = _blob(vector, self.dimensions)
        matrix = self._matrix(project, kind)
        with self._lock:
            found = [(i, matrix.where[i]) for i in dict.fromkeys(ids) if i in matrix.where]
            if not found:
                return {}
            scores = matrix.rows[[at for _, at in found]] @ query
        return {item_id: score for (item_id, _), score in zip(found, scores.tolist(), strict=True)}

    def _search_text_one(
        self,
        project: str,
        kind: VectorKind,
        text: str,
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        query = _match_query(_scope(project, kind), text)
        if query is None or k <= 0:
            return []
        if kind == "passage":
            hits = self._passage_text(project, query, k, roles)
            if hits is not None:
                return hits
        sql = "SELECT id, bm25(vector_text) AS rank FROM vector_text WHERE vector_text MATCH ?"
        params: list[object] = [query]
        if roles is not None:
            sql += f" AND role IN ({','.join('?' * len(roles))})"
            params += list(roles)
        sql += " ORDER BY rank, id LIMIT ?"
        try:
            rows = self.file.db().execute(sql, (*params, k)).fetchall()
        except sqlite3.Error as exc:
            raise VectorIndexError("text search failed") from exc
        # bm25() is lower for better matches; a Hit's score is higher for better. The
        # position and time come from the (project, kind)'s matrix, which recall's vector search
        # loads anyway, rather than from another table read (the text index holds none).
        if kind != "passage":
            return [Hit(r[0], -float(r[1])) for r in rows]
        matrix = self._matrix(project, kind)
        with self._lock:
            where, positions, times = matrix.where, matrix.positions, matrix.times
            # Looked up inline: a method call per hit adds up over a recall's 400 hits.
            return [
                Hit(r[0], -float(r[1]))
                if (at := where.get(r[0])) is None
                else Hit(r[0], -float(r[1]), positions[at], times[at])
                for r in rows
            ]

    def _passage_text(
        self, project: str, query: str, k: int, roles: Collection[Role] | None
    ) -> list[Hit] | None:
        """search_text over passages, with each match's id, role, position and time taken
        from the matrix by the text index's row number: the search then reads no stored
        row of its ~400 matches (~40% of its time). The same hits as the SQL form (ties
        by id, compared as SQLite's BINARY collation does for UTF-8). None when the file
        changed between the reads, or holds a row the matrix does not know: the caller
        then searches with SQL alone. One version before and after: every write bumps it
        in its own transaction, so an unchanged version means one state throughout."""
        db = self.file.db()
        matrix = self._matrix(project, "passage")
        with self._lock:
            version, text_ids = matrix.version, matrix.text_ids
        try:
            if text_ids is None:
                text_ids = dict(
                    db.execute(
                        "SELECT row, id FROM vector_text_rows WHERE project = ? AND kind = ?",
                        (project, "passage"),
                    ).fetchall()
                )
            rows = db.execute(
                "SELECT rowid, bm25(vector_text) FROM vector_text WHERE vector_text MATCH ?",
                (query,),
            ).fetchall()
            if self._version(db, project, "passage") != version:
                return None
        except sqlite3.Error as exc:
            raise VectorIndexError("text search failed") from exc
        wanted = None if roles is None else frozenset(roles)
        found: list[tuple[float, str, int | None, str | None]] = []
        with self._lock:
            if matrix.version != version:
                return None  # this process wrote meanwhile
            if matrix.text_ids is None:
                matrix.text_ids = text_ids
            where, held_roles = matrix.where, matrix.roles
            positions, times = matrix.positions, matrix.times
            for row, rank in rows:
                item_id = text_ids.get(row)
                at = None if item_id is None else where.get(item_id)
                if item_id is None or at is None:
                    return None
                if wanted is None or held_roles[at] in wanted:
                    found.append((rank, item_id, positions[at], times[at]))
        # ORDER BY rank, id: ids are unique, so the position and time never decide.
        found.sort()
        return [Hit(i, -float(rank), p, t) for rank, i, p, t in found[:k]]

    # -- what a request sees (domain/scope.py): each partition is searched in its own
    # matrix and text scope, so a user's search never reads another user's vectors.

    def search(
        self,
        project: str,
        kind: VectorKind,
        vector: Sequence[float],
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        found = [self._search_one(p, kind, vector, k, roles) for p in partitions(project)]
        return found[0] if len(found) == 1 else best_hits(found, k)

    def search_text(
        self,
        project: str,
        kind: VectorKind,
        text: str,
        k: int,
        roles: Collection[Role] | None = None,
    ) -> list[Hit]:
        found = [self._search_text_one(p, kind, text, k, roles) for p in partitions(project)]
        return found[0] if len(found) == 1 else best_hits(found, k)

    def similarities(
        self, project: str, kind: VectorKind, vector: Sequence[float], ids: Collection[str]
    ) -> dict[str, float]:
        scores: dict[str, float] = {}
        for p in partitions(project):
            scores.update(self._similarities_one(p, kind, vector, ids))
        return scores

    def vectors(
        self, project: str, kind: VectorKind, ids: Collection[str]
    ) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        wanted = list(dict.fromkeys(ids))
        for p in partitions(project):
            matrix = self._matrix(p, kind)
            with self._lock:
                rows = [(i, matrix.where[i]) for i in wanted if i in matrix.where]
                found.update((i, matrix.rows[at].tolist()) for i, at in rows)
        return found

    def close(self) -> None:
        self.file.close()
