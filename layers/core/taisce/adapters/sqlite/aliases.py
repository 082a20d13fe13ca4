"""Aliases in the embedded store (domain/aliases.py): what an alias key finds, merging
one entity into another in one transaction, and the lists of aliases and entities."""

from __future__ import annotations

import sqlite3
import uuid

from ...domain.aliases import NameState, plan_merge, proposal_offset_key
from ...domain.entity_counts import moved_counts, new_to_role
from ...domain.model import ROLES, Alias, EntityName, MergeResult
from ...domain.scope import seen
from .base import SqlitePart
from .sql import MARKS, SEEN, Execute, rows_in
from .work import MARK_DIRTY, MARK_VECTOR


def alias_targets(execute: Execute, project: str, keys: list[str]) -> dict[str, str]:
    """The entity each of these keys is an alias of (keys that are none left out),
    among the aliases the request sees: a user's own alias over a shared one (the
    shared partition's name sorts first, so the user's row is read last)."""
    rows = rows_in(
        execute,
        f"SELECT key, target FROM aliases WHERE {SEEN} AND key IN ({MARKS}) ORDER BY project",
        keys,
        seen(project),
    )
    return {r[0]: r[1] for r in rows}


class SqliteAliasStore(SqlitePart):
    @staticmethod
    def _name_state(db: sqlite3.Connection, project: str, key: str) -> NameState:
        # As the request sees the name (a user may merge into a shared entity); the
        # merge itself moves only what is in the request's own partition.
        alias_of = db.execute(
            f"SELECT target FROM aliases WHERE {SEEN} AND key = ? ORDER BY project DESC",
            (*seen(project), key),
        ).fetchone()
        named = db.execute(
            f"SELECT 1 FROM entities WHERE {SEEN} AND key = ?", (*seen(project), key)
        ).fetchone()
        return NameState(key, alias_of[0] if alias_of else None, named is not None)

    def merge_entities(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> MergeResult:
        with self._write() as db:
            plan = plan_merge(
                self._name_state(db, project, alias_key),
                self._name_state(db, project, into_key),
                alias_text,
                into_text,
            )
            alias, target = plan.alias_key, plan.target_key
            moved = db.execute(
                "SELECT source_role, subject_key, object_key FROM facts "
                "WHERE project = ? AND (subject_key = ? OR object_key = ?)",
                (project, alias, alias),
            ).fetchall()
            ends = moved_counts(moved, alias)
            db.execute(
                "UPDATE facts SET subject_key = ? WHERE project = ? AND subject_key = ?",
                (target, project, alias),
            )
            db.execute(
                "UPDATE facts SET object_key = ? WHERE project = ? AND object_key = ?",
                (target, project, alias),
            )
            row = db.execute(
                f"SELECT name FROM entities WHERE {SEEN} AND key = ? ORDER BY project",
                (*seen(project), target),
            ).fetchone()
            into_name = row[0] if row else into_text
            # The target may be a shared entity: the partition gains its name row, as a
            # fact naming it would have given it.
            if moved:
                db.execute(
                    "INSERT OR IGNORE INTO entities (project, key, name) VALUES (?, ?, ?)",
                    (project, target, into_name),
                )
            for role, count in ends.items():
                total = db.execute(
                    "INSERT INTO entity_roles (project, key, role, facts) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (project, key, role) DO UPDATE SET facts = facts + excluded.facts "
                    "RETURNING facts",
                    (project, target, role, count),
                ).fetchone()[0]
                if new_to_role(total - count, count) and self.switches.vectors:
                    db.execute(
                        MARK_VECTOR, (project, "entity", f"{role}:{target}", into_name, role)
                    )
            # Both ends' reports are rebuilt: the alias's are dropped, the target's grow.
            token = uuid.uuid4().hex
            db.executemany(
                MARK_DIRTY,
                [(project, role, k, token) for role in ends for k in (alias, target)],
            )
            db.execute("DELETE FROM entity_roles WHERE project = ? AND key = ?", (project, alias))
            # The alias's name vectors may stay in the index: recall resolves them.
            db.executemany(
                "DELETE FROM pending_vectors WHERE project = ? AND kind = 'entity' AND id = ?",
                [(project, f"{role}:{alias}") for role in ROLES],
            )
            row = db.execute(
                "DELETE FROM entities WHERE project = ? AND key = ? RETURNING name",
                (project, alias),
            ).fetchone()
            db.execute(
                "INSERT INTO aliases (project, key, name, target) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (project, key) DO NOTHING",
                (project, alias, row[0] if row else alias_text, target),
            )
            repointed = db.execute(
                "UPDATE aliases SET target = ? WHERE project = ? AND target = ?",
                (target, project, alias),
            ).rowcount
            alias_name = db.execute(
                "SELECT name FROM aliases WHERE project = ? AND key = ?", (project, alias)
            ).fetchone()[0]
        return MergeResult(alias_name, into_name, len(moved), repointed)

    def aliases(self, project: str) -> list[Alias]:
        rows = self._db().execute(
            "SELECT a.name, a.key, COALESCE(e.name, a.target), a.target FROM aliases a "
            "LEFT JOIN entities e ON e.project = a.project AND e.key = a.target "
            "WHERE a.project IN (?, ?) ORDER BY a.key, a.project",
            seen(project),
        )
        # A user's own alias of a key over the shared one (read after it).
        return list({r[1]: Alias(*r) for r in rows}.values())

    def alias_page(self, project: str, after: str | None, limit: int) -> list[Alias]:
        rows = self._db().execute(
            "SELECT a.name, a.key, COALESCE(e.name, a.target), a.target FROM aliases a "
            "LEFT JOIN entities e ON e.project = a.project AND e.key = a.target "
            "WHERE a.project IN (?, ?) AND a.key > ? ORDER BY a.key, a.project LIMIT ?",
            # At most two rows a key (the shared one, then the user's): twice the page and
            # one more holds `limit` whole keys whenever there are that many.
            (*seen(project), after or "", 2 * limit + 1),
        )
        # A user's own alias of a key over the shared one (read after it).
        return list({r[1]: Alias(*r) for r in rows}.values())[:limit]

    def entity_names(self, project: str, limit: int, offset: int = 0) -> list[EntityName]:
        rows = self._db().execute(
            # MIN(e.project): the name of the shared row where both partitions hold one.
            "SELECT e.key, e.name, SUM(r.facts), MIN(e.project) FROM entities e "
            "JOIN entity_roles r ON r.project = e.project AND r.key = e.key "
            "WHERE e.project IN (?, ?) "
            "GROUP BY e.key HAVING SUM(r.facts) > 0 ORDER BY e.key LIMIT ? OFFSET ?",
            (*seen(project), limit, offset),
        )
        return [EntityName(*r[:3]) for r in rows]

    def proposal_offset(self, project: str) -> int:
        row = (
            self._db()
            .execute("SELECT value FROM meta WHERE key = ?", (proposal_offset_key(project),))
            .fetchone()
        )
        return int(row[0]) if row else 0

    def set_proposal_offset(self, project: str, offset: int) -> None:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                (proposal_offset_key(project), str(offset)),
            )
