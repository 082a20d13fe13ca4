"""The explorer's listings in the embedded store (domain/listing.py): a page of
entities (by key) and a page of messages (newest first)."""

from __future__ import annotations

from ...domain.model import EntityCounts, Message, Role
from ...domain.scope import partitions, seen
from .base import SqlitePart
from .sql import SEEN


class SqliteListingStore(SqlitePart):
    def entity_page(
        self, project: str, after: str | None, limit: int, contains: str | None
    ) -> list[EntityCounts]:
        # An entity is a key within what the request sees: the shared partition and
        # the user's may both hold it (one row each); listed once, with the shared
        # row's name (MIN(e.project): the shared partition's name sorts first), its
        # counts summed over both.
        where = ["e.project IN (?, ?)"]
        args: list[object] = [*seen(project)]
        if after is not None:
            where.append("e.key > ?")
            args.append(after)
        if contains:
            where.append("instr(e.key, ?) > 0")
            args.append(contains)
        db = self._db()
        rows = db.execute(
            f"SELECT e.key, e.name, MIN(e.project) FROM entities e WHERE {' AND '.join(where)} "
            "AND EXISTS (SELECT 1 FROM entity_roles r WHERE r.project IN (?, ?) "
            "AND r.key = e.key AND r.facts > 0) GROUP BY e.key ORDER BY e.key LIMIT ?",
            (*args, *seen(project), limit),
        ).fetchall()
        counts: dict[str, dict[Role, int]] = {r[0]: {} for r in rows}
        if rows:
            marks = ",".join("?" * len(rows))
            for key, role, n in db.execute(
                f"SELECT key, role, SUM(facts) FROM entity_roles WHERE {SEEN} "
                f"AND key IN ({marks}) GROUP BY key, role",
                (*seen(project), *counts),
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
        where: list[str] = []
        args: list[object] = []
        if before is not None:
            where.append("(recorded_at, id) < (?, ?)")
            args += list(before)
        if role is not None:
            where.append("role = ?")
            args.append(role)
        if source is not None:
            where.append("source = ?")
            args.append(source)
        conditions = "".join(f" AND {w}" for w in where)
        # A page of each partition the request sees (each one index range, newest
        # first), then the newest of both: the cost of a page does not grow with
        # what other users hold.
        rows = [
            row
            for partition in partitions(project)
            for row in self._db().execute(
                "SELECT id, role, content, source, occurred_at, recorded_at FROM messages "
                f"WHERE project = ?{conditions} ORDER BY recorded_at DESC, id DESC LIMIT ?",
                (partition, *args, limit),
            )
        ]
        rows.sort(key=lambda r: (r[5], r[0]), reverse=True)
        return [Message(*r) for r in rows[:limit]]
