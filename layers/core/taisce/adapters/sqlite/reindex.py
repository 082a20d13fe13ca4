"""Reindexing in the embedded store (the `taisce reindex` command, and a new embedding
model): every passage, fact and live name marked for indexing, every entity for a
report rebuild."""

from __future__ import annotations

from .base import SqlitePart


class SqliteReindex(SqlitePart):
    def mark_everything(self, project: str | None = None) -> int:
        """Mark every passage, fact and live name for indexing, and every entity for a
        report rebuild (to index what was stored while no model was configured).
        Returns how many vector marks were written."""
        only = "AND project = ?" if project else ""
        params: tuple[str, ...] = (project,) if project else ()
        with self._write() as db:
            passages = db.execute(
                "INSERT INTO pending_vectors "
                "(project, kind, id, text, role, position, occurred_at) "
                "SELECT p.project, 'passage', p.id, p.quote, p.role, m.position, "
                "COALESCE(m.occurred_at, '') "
                "FROM passages p JOIN messages m ON m.project = p.project AND m.id = p.message_id "
                f"WHERE 1 {only.replace('project', 'p.project')} "
                "ON CONFLICT (project, kind, id) DO NOTHING",
                params,
            ).rowcount
            names = db.execute(
                "INSERT INTO pending_vectors (project, kind, id, text, role) "
                "SELECT project, 'entity', role || ':' || key, "
                "(SELECT name FROM entities e WHERE e.project = r.project AND e.key = r.key), "
                f"role FROM entity_roles r WHERE facts > 0 {only} "
                "ON CONFLICT (project, kind, id) DO NOTHING",
                params,
            ).rowcount
            facts = db.execute(
                "INSERT INTO pending_vectors (project, kind, id, text, role) "
                f"SELECT project, 'fact', id, statement, source_role FROM facts WHERE 1 {only} "
                "ON CONFLICT (project, kind, id) DO NOTHING",
                params,
            ).rowcount
            db.execute(
                "INSERT INTO dirty_entities (project, role, key, token) "
                "SELECT project, role, key, lower(hex(randomblob(16))) FROM entity_roles "
                f"WHERE facts > 0 {only} "
                "ON CONFLICT (project, role, key) DO UPDATE SET token = excluded.token",
                params,
            )
        return passages + names + facts
