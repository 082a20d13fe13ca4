"""Entity names in the embedded store: which names are entities of a project (by the
live facts of each role that name them), and which entity an alias finds
(domain/aliases.py, resolve)."""

from __future__ import annotations

from collections.abc import Collection

from ...domain.aliases import resolve
from ...domain.model import Role
from ...domain.scope import seen
from .aliases import alias_targets
from .base import SqlitePart
from .sql import MARKS, SEEN, rows_in


class SqliteNameLookup(SqlitePart):
    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        wanted = list(keys)
        if roles is None:
            rows = rows_in(
                self._db().execute,
                f"SELECT key FROM entities WHERE {SEEN} AND key IN ({MARKS})",
                wanted,
                seen(project),
            )
        else:
            rows = rows_in(
                self._db().execute,
                f"SELECT DISTINCT key FROM entity_roles WHERE {SEEN} AND key IN ({MARKS}) "
                f"AND role IN ({','.join('?' * len(roles))}) AND facts > 0",
                wanted,
                seen(project),
                tuple(roles),
            )
        return {r[0] for r in rows}

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        wanted = list(keys)
        targets = alias_targets(self._db().execute, project, wanted)
        live = self.known_names(project, set(wanted) - set(targets), roles)
        live |= self.known_names(project, set(targets.values()), roles)
        return resolve(wanted, targets, live)

    def entity_keys(self, project: str, limit: int) -> list[str]:
        rows = self._db().execute(
            f"SELECT DISTINCT key FROM entities WHERE {SEEN} ORDER BY key LIMIT ?",
            (*seen(project), limit),
        )
        return [r[0] for r in rows]
