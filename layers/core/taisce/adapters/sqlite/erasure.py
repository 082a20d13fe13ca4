"""Erasure in the embedded store (domain/erasure.py): erase() applying the plan in one
transaction (so an erasure is all or nothing, vectors included: the index lives in this
file), the tombstones it leaves and the aliases it forgets, and the erasure requests,
recorded as DynamoDB records them."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Collection, Sequence

from ...domain.entity_counts import end_counts
from ...domain.erasure_reports import report_marks, touched_by_erasure
from ...domain.erasure_status import erasure_status
from ...domain.model import (
    COUNTS,
    ROLES,
    ErasurePlan,
    ErasureRecord,
    ErasureStatus,
    PendingErasure,
    Role,
    VectorKind,
)
from ...domain.scope import seen
from . import vectors as sqlite_vectors
from .base import SqlitePart
from .reports import components_of
from .sql import MARKS, rows_in
from .tombstones import erased_hashes
from .work import MARK_DIRTY


class SqliteErasureStore(SqlitePart):
    def erase(self, project: str, plan: ErasurePlan) -> int:
        token = uuid.uuid4().hex
        erased = set(plan.entity_keys)
        vectors: list[tuple[str, str]] = []
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO erased_subjects (project, hash) VALUES (?, ?)",
                (project, plan.tombstone),
            )
            # Facts, with the counts of the ends that stay.
            gone = rows_in(
                db.execute,
                f"DELETE FROM facts WHERE project = ? AND id IN ({MARKS}) "
                "RETURNING source_role, subject_key, object_key",
                plan.fact_ids,
                (project,),
            )
            db.executemany(
                "DELETE FROM pending_vectors WHERE project = ? AND kind = 'fact' AND id = ?",
                [(project, i) for i in plan.fact_ids],
            )
            vectors += [("fact", i) for i in plan.fact_ids]
            for role, subject_key, object_key in gone:
                ends = end_counts(subject_key, object_key)
                db.executemany(
                    "UPDATE entity_roles SET facts = facts - ? "
                    "WHERE project = ? AND key = ? AND role = ?",
                    [(n, project, k, role) for k, n in ends.items() if k not in erased],
                )
            # Entities: names, role counts, their pending vectors (and their vectors).
            for key in erased:
                db.execute("DELETE FROM entities WHERE project = ? AND key = ?", (project, key))
                db.execute("DELETE FROM entity_roles WHERE project = ? AND key = ?", (project, key))
                ids = [f"{role}:{key}" for role in ROLES]
                db.executemany(
                    "DELETE FROM pending_vectors WHERE project = ? AND kind = 'entity' AND id = ?",
                    [(project, i) for i in ids],
                )
                vectors += [("entity", i) for i in ids]
            # Messages: the redacted text, passages deleted or given the new source.
            for r in plan.redactions:
                db.execute(
                    "UPDATE messages SET content = ?, source = ? WHERE project = ? AND id = ?",
                    (r.content, r.source, project, r.message_id),
                )
                db.executemany(
                    "DELETE FROM passages WHERE project = ? AND id = ?",
                    [(project, p.id) for p in r.dropped],
                )
                db.executemany(
                    "DELETE FROM pending_vectors WHERE project = ? AND kind = 'passage' AND id = ?",
                    [(project, p.id) for p in r.dropped],
                )
                db.executemany(
                    "UPDATE passages SET source = ? WHERE project = ? AND id = ?",
                    [(p.source, project, p.id) for p in r.kept],
                )
                vectors += [("passage", p.id) for p in r.dropped]
            # Reports of every component the erased facts reached: dropped now, their
            # members marked so the worker rebuilds them from the facts that remain.
            touched = touched_by_erasure(erased, gone)
            dropped = self._drop_reports(db, project, touched, erased, token)
            vectors += [("report", i) for i in dropped]
            self._erase_vectors(db, project, vectors)
        return len(dropped)

    @staticmethod
    def _erase_vectors(
        db: sqlite3.Connection, project: str, vectors: list[tuple[str, str]]
    ) -> None:
        """The vectors and indexed text of erased items, deleted in the erasure's own
        transaction: the vector index lives in this file (if embeddings were ever on),
        so nothing, not even the ids (an entity's holds its name), is kept for later.
        Ids an older version left in erased_vectors go too."""
        legacy = db.execute(
            "DELETE FROM erased_vectors WHERE project = ? RETURNING kind, id", (project,)
        ).fetchall()
        if not sqlite_vectors.held_in(db):
            return
        by_kind: dict[str, list[str]] = {}
        for kind, item_id in [*vectors, *legacy]:
            by_kind.setdefault(kind, []).append(item_id)
        for kind, ids in by_kind.items():
            sqlite_vectors.delete_rows(db, project, kind, sorted(set(ids)))

    def drain_erased_vectors(self) -> None:
        """Ids an older version left in erased_vectors (an entity's holds its name):
        their vectors and the rows go, and the file is purged, once, at open."""
        if self._db().execute("SELECT 1 FROM erased_vectors LIMIT 1").fetchone() is None:
            return
        with self._write() as db:
            projects = [r[0] for r in db.execute("SELECT DISTINCT project FROM erased_vectors")]
            for project in projects:
                self._erase_vectors(db, project, [])
        self._purge_deleted()

    def _drop_reports(
        self,
        db: sqlite3.Connection,
        project: str,
        touched: dict[Role, set[str]],
        erased: set[str],
        token: str,
    ) -> list[str]:
        dropped: list[str] = []
        for role, keys in touched.items():
            components = components_of(db.execute, project, role, list(keys))
            members: set[str] = set()
            for component in components:
                for report_id, entity_keys in db.execute(
                    "DELETE FROM reports WHERE project = ? AND role = ? AND component = ? "
                    "RETURNING id, entity_keys",
                    (project, role, component),
                ).fetchall():
                    dropped.append(report_id)
                    members.update(json.loads(entity_keys))
                    db.execute(
                        "DELETE FROM report_members WHERE project = ? AND role = ? "
                        "AND report_id = ?",
                        (project, role, report_id),
                    )
            # The erased names are not marked: a rebuild that read the facts before this
            # transaction and writes after it is stopped by the tombstones (replace_reports).
            marks = report_marks(keys, members, erased)
            db.executemany(MARK_DIRTY, [(project, role, k, token) for k in marks.mark])
            db.executemany(
                "DELETE FROM dirty_entities WHERE project = ? AND role = ? AND key = ?",
                [(project, role, k) for k in marks.clear],
            )
        return dropped

    def _purge_deleted(self) -> None:
        """What SQLite keeps of deleted rows is purged: the full-text index's deleted
        terms (merged away) and the WAL's older page copies (checkpointed, truncated).
        Deleted content in the file itself was zeroed as it went (secure_delete)."""
        with self._write() as db:
            if sqlite_vectors.held_in(db):
                sqlite_vectors.purge_text(db)
        self.file.purge()

    # -- what an erasure leaves: tombstones, the vector ids an older version recorded
    # for deleting later (none are written now), and the aliases it forgets

    def add_tombstones(self, project: str, hashes: Collection[str], at: str | None = None) -> None:
        # `at` is not kept here: a user's scope is erased in the transaction that
        # writes its tombstone and its audit record, whose time a guarded write reads.
        with self._write() as db:
            db.executemany(
                "INSERT OR IGNORE INTO erased_subjects (project, hash) VALUES (?, ?)",
                [(project, h) for h in dict.fromkeys(hashes)],
            )

    def erased(self, project: str, hashes: Collection[str]) -> set[str]:
        return erased_hashes(self._db().execute, project, list(hashes))

    def clear_erased(self, project: str, hashes: Collection[str]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM erased_subjects WHERE project = ? AND hash = ?",
                [(project, h) for h in hashes],
            )

    def erased_vectors(self, project: str) -> list[tuple[VectorKind, str]]:
        rows = self._db().execute(
            "SELECT kind, id FROM erased_vectors WHERE project = ? ORDER BY kind, id", (project,)
        )
        return [(r[0], r[1]) for r in rows]

    def clear_erased_vectors(self, project: str, items: Sequence[tuple[VectorKind, str]]) -> None:
        with self._write() as db:
            db.executemany(
                "DELETE FROM erased_vectors WHERE project = ? AND kind = ? AND id = ?",
                [(project, kind, i) for kind, i in items],
            )

    def remove_aliases(self, project: str, keys: Collection[str]) -> int:
        wanted = sorted(set(keys))
        if not wanted:
            return 0
        marks = ", ".join("?" * len(wanted))
        with self._write() as db:
            gone = db.execute(
                f"DELETE FROM aliases WHERE project = ? AND (key IN ({marks}) "
                f"OR target IN ({marks}))",
                (project, *wanted, *wanted),
            )
            return gone.rowcount

    # -- erasure requests: the embedded store finishes them in the request, but records
    # them as DynamoDB does, so a crash part-way leaves one the worker completes.

    def begin_erasure(self, pending: PendingErasure) -> None:
        with self._write() as db:
            db.execute(
                "INSERT INTO erasure_requests (project, id, subject_hash, names, requested_at, "
                "holder, held_until) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    pending.project,
                    pending.id,
                    pending.subject_hash,
                    json.dumps(list(pending.names)),
                    pending.requested_at,
                    pending.holder,
                    pending.held_until,
                ),
            )

    def _pending(self, project: str, where: str, params: tuple[str, ...]) -> list[PendingErasure]:
        # A user's request is also hidden what a pending shared erasure will remove.
        rows = self._db().execute(
            "SELECT project, id, subject_hash, names, requested_at, facts, entities, messages, "
            "passages, reports, holder, held_until, cursor "
            f"FROM erasure_requests WHERE project IN (?, ?) {where} "
            "ORDER BY requested_at, id",
            (*seen(project), *params),
        )
        return [
            PendingErasure(
                id=r["id"],
                project=project if r["project"] == project else r["project"],
                subject_hash=r["subject_hash"],
                names=tuple(json.loads(r["names"])),
                requested_at=r["requested_at"],
                counts={k: r[k] for k in COUNTS},
                holder=r["holder"],
                held_until=r["held_until"],
                cursor=r["cursor"],
            )
            for r in rows
        ]

    def pending_erasure(self, project: str, erasure_id: str) -> PendingErasure | None:
        found = self._pending(project, "AND id = ?", (erasure_id,))
        return found[0] if found else None

    def pending_erasures(self, project: str) -> list[PendingErasure]:
        return self._pending(project, "", ())

    def erasing_projects(self) -> list[str]:
        rows = self._db().execute("SELECT DISTINCT project FROM erasure_requests ORDER BY project")
        return [r[0] for r in rows]

    def claim_erasure(
        self, project: str, erasure_id: str, holder: str, now: float, until: float
    ) -> bool:
        with self._write() as db:
            return (
                db.execute(
                    "UPDATE erasure_requests SET holder = ?, held_until = ? "
                    "WHERE project = ? AND id = ? "
                    "AND (holder IS NULL OR holder = ? OR held_until < ?)",
                    (holder, until, project, erasure_id, holder, now),
                ).rowcount
                == 1
            )

    def add_erasure_counts(
        self, project: str, erasure_id: str, counts: dict[str, int], cursor: str | None = None
    ) -> None:
        with self._write() as db:
            db.execute(
                "UPDATE erasure_requests SET "
                + ", ".join(f"{k} = {k} + ?" for k in COUNTS)
                + ", cursor = COALESCE(?, cursor) WHERE project = ? AND id = ?",
                (*(counts.get(k, 0) for k in COUNTS), cursor, project, erasure_id),
            )

    def release_request_holds(self) -> int:
        """Let go of the pending erasures held by requests (holder `request_...`):
        called as a server starts, when no request of this server runs yet, so that
        the worker completes an erasure a stopped server left part-way at once
        rather than after its hold. Returns how many were let go."""
        held = "holder LIKE 'request!_%' ESCAPE '!'"
        if self._db().execute(f"SELECT 1 FROM erasure_requests WHERE {held}").fetchone() is None:
            return 0  # nothing to write (a full disk must not stop the start)
        with self._write() as db:
            return db.execute(
                f"UPDATE erasure_requests SET holder = NULL, held_until = NULL WHERE {held}"
            ).rowcount

    def finish_erasure(self, record: ErasureRecord, requested_at: str) -> bool:
        with self._write() as db:
            gone = db.execute(
                "DELETE FROM erasure_requests WHERE project = ? AND id = ?",
                (record.project, record.id),
            ).rowcount
            if not gone:
                return False
            db.execute(
                "INSERT INTO erasures (id, project, subject_hash, erased_at, facts, entities, "
                "messages, passages, reports, requested_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.project,
                    record.subject_hash,
                    record.erased_at,
                    *(record.counts()[k] for k in COUNTS),
                    requested_at,
                ),
            )
        self._purge_deleted()
        return True

    def erasure_status(self, project: str, erasure_id: str) -> ErasureStatus | None:
        pending = self.pending_erasure(project, erasure_id)  # first: see erasure_status
        row = (
            self._db()
            .execute(
                "SELECT erased_at, requested_at, facts, entities, messages, passages, reports "
                # A user's erasure is recorded under the project (no user id in it).
                "FROM erasures WHERE project IN (?, ?) AND id = ?",
                (*seen(project), erasure_id),
            )
            .fetchone()
        )
        finished = None
        if row is not None:
            counts = {k: row[k] for k in COUNTS}
            finished = ErasureStatus(
                erasure_id, "done", counts, row["requested_at"], row["erased_at"]
            )
        return erasure_status(erasure_id, pending, finished)

    def erasures(self, project: str | None = None) -> list[ErasureRecord]:
        query = (
            "SELECT id, project, subject_hash, erased_at, facts, entities, messages, passages, "
            "reports FROM erasures"
        )
        params: tuple[str, ...] = ()
        if project is not None:
            query += " WHERE project = ?"
            params = (project,)
        return [ErasureRecord(*r) for r in self._scan(query + " ORDER BY seq", params)]
