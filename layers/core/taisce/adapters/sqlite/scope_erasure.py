"""Erasing everything in one user's scope of a project (domain/scope.py) from the
embedded store: every row of the user's partition, its vectors and text-index rows,
in one transaction; a tombstone and an audit record under the project that name the
user only by a hash; then what SQLite keeps of deleted rows is purged."""

from __future__ import annotations

from ...domain.aliases import proposal_offset_key
from ...domain.model import COUNTS, ErasureRecord
from . import vectors as sqlite_vectors
from .base import SqlitePart

# What the audit counts, by table (the API's erased counts).
_COUNTED = {
    "facts": "facts",
    "entities": "entities",
    "messages": "messages",
    "passages": "passages",
    "reports": "reports",
}
# Every other table that holds rows of a partition.
_ALSO = (
    "entity_roles",
    "pending_vectors",
    "message_positions",
    "dirty_entities",
    "report_members",
    "pending_extractions",
    "failed_extractions",
    "aliases",
    "erased_subjects",
    "erased_vectors",
    "erasure_requests",
)


class SqliteScopeErasure(SqlitePart):
    def erase_scope(self, partition: str, tombstone: str, record: ErasureRecord) -> dict[str, int]:
        """Delete every row of `partition`; the tombstone and the audit record go under
        `record.project` (the project's shared partition). Returns the counts."""
        counts: dict[str, int] = {}
        with self._write() as db:
            for name, table in _COUNTED.items():
                counts[name] = db.execute(
                    f"DELETE FROM {table} WHERE project = ?", (partition,)
                ).rowcount
            for table in _ALSO:
                db.execute(f"DELETE FROM {table} WHERE project = ?", (partition,))
            # Where its merge proposals stood (a hash of the partition, and a number).
            db.execute("DELETE FROM meta WHERE key = ?", (proposal_offset_key(partition),))
            if sqlite_vectors.held_in(db):
                held = db.execute(
                    "SELECT kind, id FROM vectors WHERE project = ?", (partition,)
                ).fetchall()
                for kind in {k for k, _ in held}:
                    ids = [i for k, i in held if k == kind]
                    sqlite_vectors.delete_rows(db, partition, kind, ids)
            db.execute(
                "INSERT OR IGNORE INTO erased_subjects (project, hash) VALUES (?, ?)",
                (record.project, tombstone),
            )
            db.execute(
                "INSERT INTO erasures (id, project, subject_hash, erased_at, facts, entities, "
                "messages, passages, reports, requested_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.id,
                    record.project,
                    record.subject_hash,
                    record.erased_at,
                    *(counts[k] for k in COUNTS),
                    record.erased_at,
                ),
            )
            if sqlite_vectors.held_in(db):
                sqlite_vectors.purge_text(db)
        self.file.purge()
        return counts
