"""Work marks of the embedded store, each written in the transaction of the record it
is about and cleared by the worker that takes it: vectors to embed, entities whose
reports to rebuild, messages to extract facts from (and extractions that failed)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ...domain.extraction import failures_to_replay
from ...domain.model import ExtractionFailure, PendingVector, Role, VectorKind
from .base import SqlitePart

MARK_DIRTY = (
    "INSERT INTO dirty_entities (project, role, key, token) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (project, role, key) DO UPDATE SET token = excluded.token"
)
MARK_VECTOR = (
    "INSERT INTO pending_vectors (project, kind, id, text, role) VALUES (?, ?, ?, ?, ?) "
    "ON CONFLICT (project, kind, id) DO UPDATE SET text = excluded.text, role = excluded.role"
)
MARK_PASSAGE = (
    "INSERT INTO pending_vectors (project, kind, id, text, role, position, occurred_at) "
    "VALUES (?, 'passage', ?, ?, ?, ?, ?) ON CONFLICT (project, kind, id) DO UPDATE SET "
    "text = excluded.text, role = excluded.role, position = excluded.position, "
    "occurred_at = excluded.occurred_at"
)
# (kind, id) pairs read per statement: two parameters each, under SQLite's limit.
MARKS_READ = 400


class SqliteWorkMarks(SqlitePart):
    # -- vectors ----------------------------------------------------------------

    def vector_projects(self) -> list[str]:
        rows = self._db().execute("SELECT DISTINCT project FROM pending_vectors ORDER BY project")
        return [r["project"] for r in rows]

    def pending_vectors(self, project: str, limit: int) -> list[PendingVector]:
        rows = self._db().execute(
            "SELECT kind, id, text, role, position, occurred_at FROM pending_vectors "
            "WHERE project = ? ORDER BY kind, id LIMIT ?",
            (project, limit),
        )
        return [
            PendingVector(r["kind"], r["id"], r["text"], r["role"], r["position"], r["occurred_at"])
            for r in rows
        ]

    def clear_pending_vectors(self, project: str, items: Sequence[PendingVector]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM pending_vectors WHERE project = ? AND kind = ? AND id = ? "
                "AND text = ?",
                [(project, i.kind, i.id, i.text) for i in items],
            )

    def vector_marks(
        self, project: str, items: Sequence[tuple[VectorKind, str]]
    ) -> list[PendingVector]:
        found: list[PendingVector] = []
        db = self._db()
        for n in range(0, len(items), MARKS_READ):
            group = items[n : n + MARKS_READ]
            pairs = " OR ".join(["(kind = ? AND id = ?)"] * len(group))
            rows = db.execute(
                "SELECT kind, id, text, role, position, occurred_at FROM pending_vectors "
                f"WHERE project = ? AND ({pairs})",
                (project, *(v for item in group for v in item)),
            )
            found += [
                PendingVector(
                    r["kind"], r["id"], r["text"], r["role"], r["position"], r["occurred_at"]
                )
                for r in rows
            ]
        return found

    # -- reports to rebuild -------------------------------------------------------

    def dirty_projects(self) -> list[str]:
        rows = self._db().execute("SELECT DISTINCT project FROM dirty_entities ORDER BY project")
        return [r["project"] for r in rows]

    def dirty_entities(self, project: str) -> list[tuple[Role, str, str]]:
        rows = self._db().execute(
            "SELECT role, key, token FROM dirty_entities WHERE project = ? ORDER BY role, key",
            (project,),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def clear_dirty(self, project: str, marks: Sequence[tuple[Role, str, str]]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM dirty_entities "
                "WHERE project = ? AND role = ? AND key = ? AND token = ?",
                [(project, *mark) for mark in marks],
            )

    # -- extraction (messages -> facts) ----------------------------------------------

    def extraction_projects(self) -> list[str]:
        rows = self._db().execute(
            "SELECT DISTINCT project FROM pending_extractions ORDER BY project"
        )
        return [r["project"] for r in rows]

    def pending_extractions(self, project: str, limit: int) -> list[str]:
        rows = self._db().execute(
            "SELECT message_id FROM pending_extractions WHERE project = ? "
            "ORDER BY message_id LIMIT ?",
            (project, limit),
        )
        return [r["message_id"] for r in rows]

    def extraction_pending(self, project: str, message_id: str) -> bool:
        row = (
            self._db()
            .execute(
                "SELECT 1 FROM pending_extractions WHERE project = ? AND message_id = ?",
                (project, message_id),
            )
            .fetchone()
        )
        return row is not None

    def finish_extraction(
        self, project: str, message_id: str, failure: ExtractionFailure | None = None
    ) -> None:
        with self._write() as db:
            db.execute(
                "DELETE FROM pending_extractions WHERE project = ? AND message_id = ?",
                (project, message_id),
            )
            if failure is not None:
                db.execute(
                    "INSERT OR REPLACE INTO failed_extractions "
                    "(project, message_id, error, attempts, failed_at) VALUES (?, ?, ?, ?, ?)",
                    (project, message_id, failure.error, failure.attempts, failure.failed_at),
                )

    def failed_extractions(self, project: str | None = None) -> list[ExtractionFailure]:
        only = "WHERE project = ?" if project is not None else ""
        rows = self._db().execute(
            "SELECT project, message_id, error, attempts, failed_at FROM failed_extractions "
            f"{only} ORDER BY project, message_id",
            (project,) if project is not None else (),
        )
        return [ExtractionFailure(**dict(r)) for r in rows]

    def replay_extractions(
        self, project: str | None = None, message_ids: Collection[str] | None = None
    ) -> list[ExtractionFailure]:
        replayed: list[ExtractionFailure] = []
        with self._write() as db:
            for failure in failures_to_replay(self.failed_extractions(project), message_ids):
                db.execute(
                    "DELETE FROM failed_extractions WHERE project = ? AND message_id = ?",
                    (failure.project, failure.message_id),
                )
                db.execute(
                    "INSERT OR IGNORE INTO pending_extractions (project, message_id) VALUES (?, ?)",
                    (failure.project, failure.message_id),
                )
                replayed.append(failure)
        return replayed
