"""The explorer's listings in the embedded store (domain/listing.py): a page of
entities (by key) and a page of messages (newest first)."""

from __future__ import annotations

from ...domain.model import EntityCounts, Message, Role
from .base import SqlitePart


class SqliteListingStore(SqlitePart):
    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        where = ["e.project = ?"]
        args: list[object] = [project]
        if after is not None:
            where.append("e.key > ?")
            args.append(after)
        if contains:
            where.append("instr(e.key, ?) > 0")
            args.append(contains)
        db = self._db()
        rows = db.execute(
            f"SELECT e.key, e.name FROM entities e WHERE {' AND '.join(where)} "
            "AND EXISTS (SELECT 1 FROM entity_roles r WHERE r.project = e.project "
            "AND r.key = e.key AND r.facts > 0) ORDER BY e.key LIMIT ?",
            (*args, limit),
        ).fetchall()
        counts: dict[str, dict[Role, int]] = {r[0]: {} for r in rows}
        if rows:
            marks = ",".join("?" * len(rows))
            for key, role, n in db.execute(
                f"SELECT key, role, facts FROM entity_roles WHERE project = ? AND key IN ({marks})",
                (project, *counts),
            ):
                counts[key][role] = n
        return [EntityCounts(r[0], r[1], counts[r[0]]) for r in rows]

    def message_page(
        self,
        project: str,
        before: tuple[str, str] | None,
        limit: int,
        role: Role | None,
        source: str | None,
    ) -> list[Message]:
        where = ["project = ?"]
        args: list[object] = [project]
        if before is not None:
            where.append("(recorded_at, id) < (?, ?)")
            args += list(before)
        if role is not None:
            where.append("role = ?")
            args.append(role)
        if source is not None:
            where.append("source = ?")
            args.append(source)
        rows = self._db().execute(
            "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
            f"WHERE {' AND '.join(where)} ORDER BY recorded_at DESC, id DESC LIMIT ?",
            (*args, limit),
        )
        return [Message(*r) for r in rows]
