"""Reports in the embedded store (domain/reports.py): the components that hold
entities, replacing a component's reports (never with an erased name in them), and
the reads recall makes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Sequence

from ...domain.erasure import tombstone_hashes
from ...domain.model import Report, Role
from ...domain.scope import seen
from .base import SqlitePart
from .sql import MARKS, Execute, rows_in
from .tombstones import erased_hashes

_SELECT = (
    "SELECT id, role, level, parent_id, title, summary, path, source_messages, "
    "entity_keys, component FROM reports WHERE project IN (?, ?)"
)


def components_of(execute: Execute, project: str, role: Role, keys: list[str]) -> set[str]:
    """The components of this role's reports that hold any of these entities."""
    rows = rows_in(
        execute,
        "SELECT DISTINCT r.component FROM report_members m JOIN reports r "
        "ON r.project = m.project AND r.id = m.report_id "
        f"WHERE m.project = ? AND m.role = ? AND m.key IN ({MARKS})",
        keys,
        (project, role),
    )
    return {r[0] for r in rows}


def _report(r: sqlite3.Row) -> Report:
    return Report(
        id=r["id"],
        role=r["role"],
        level=r["level"],
        parent_id=r["parent_id"],
        title=r["title"],
        summary=r["summary"],
        path=tuple(json.loads(r["path"])),
        source_messages=tuple(json.loads(r["source_messages"])),
        entity_keys=tuple(json.loads(r["entity_keys"])),
        component=r["component"],
    )


class SqliteReportStore(SqlitePart):
    def report_components(self, project: str, role: Role, keys: Collection[str]) -> set[str]:
        return components_of(self._db().execute, project, role, list(keys))

    def replace_reports(
        self, project: str, role: Role, components: Collection[str], reports: Sequence[Report]
    ) -> list[str]:
        """Drop the reports of `components` and store `reports`, in one transaction.

        Returns the ids of the reports dropped (whose vectors must go too)."""
        dropped: list[str] = []
        with self._write() as db:
            reports = self._not_erased(db, project, reports)
            for component in components:
                ids = [
                    r[0]
                    for r in db.execute(
                        "DELETE FROM reports WHERE project = ? AND role = ? AND component = ? "
                        "RETURNING id",
                        (project, role, component),
                    )
                ]
                db.executemany(
                    "DELETE FROM report_members WHERE project = ? AND role = ? AND report_id = ?",
                    [(project, role, i) for i in ids],
                )
                dropped += ids
            for r in reports:
                db.execute(
                    "INSERT OR REPLACE INTO reports (project, id, role, level, parent_id, "
                    "title, summary, path, source_messages, entity_keys, component) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        project,
                        r.id,
                        r.role,
                        r.level,
                        r.parent_id,
                        r.title,
                        r.summary,
                        json.dumps(r.path),
                        json.dumps(r.source_messages),
                        json.dumps(r.entity_keys),
                        r.component,
                    ),
                )
                db.executemany(
                    "INSERT OR IGNORE INTO report_members (project, role, key, report_id) "
                    "VALUES (?, ?, ?, ?)",
                    [(project, r.role, k, r.id) for k in r.entity_keys],
                )
        kept = {r.id for r in reports}
        return [i for i in dropped if i not in kept]

    @staticmethod
    def _not_erased(
        db: sqlite3.Connection, project: str, reports: Sequence[Report]
    ) -> Sequence[Report]:
        """The reports without those of a component that holds an erased name: built
        from facts read before an erasure and written after it. Checked in the write's
        transaction, after the tombstone (written first) is committed; the erasure
        marked the members that stay, so the next pass rebuilds the component."""
        keys = {k for r in reports for k in r.entity_keys}
        if not keys:
            return reports
        hashes = tombstone_hashes(project, keys)
        erased = {hashes[h] for h in erased_hashes(db.execute, project, list(hashes))}
        if not erased:
            return reports
        tainted = {r.component for r in reports if erased.intersection(r.entity_keys)}
        return [r for r in reports if r.component not in tainted]

    def reports_by_ids(self, project: str, ids: Sequence[str]) -> list[Report]:
        rows = rows_in(self._db().execute, f"{_SELECT} AND id IN ({MARKS})", ids, seen(project))
        found = {r["id"]: _report(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def reports_of_entity(self, project: str, key: str, roles: Collection[Role]) -> list[Report]:
        """The level-0 reports that hold this entity, for the roles given."""
        marks = ",".join("?" * len(roles))
        rows = self._db().execute(
            f"{_SELECT} AND level = 0 AND role IN ({marks}) AND id IN (SELECT report_id "
            "FROM report_members WHERE project = reports.project AND key = ?) ORDER BY role, id",
            (*seen(project), *roles, key),
        )
        return [_report(r) for r in rows]
