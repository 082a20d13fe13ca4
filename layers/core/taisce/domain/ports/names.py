"""Entity names: which names are entities, and which entity an alias finds."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from ..model import Role


class NameLookup(Protocol):
    """Reads of the names a project's facts hold (aliases resolved)."""

    def known_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> set[str]:
        """Which of these normalised names are entities of the project: named by a
        live fact of one of `roles`, or by any fact ever stored if roles is None."""
        ...

    def resolve_names(
        self, project: str, keys: Collection[str], roles: Collection[Role] | None = None
    ) -> dict[str, str]:
        """Which of these names find an entity, and which: each key that is an entity
        (as known_names decides) maps to itself, each alias of such an entity to it."""
        ...

    def entity_keys(self, project: str, limit: int) -> list[str]:
        """Up to `limit` keys of entity names held (live or not, not aliases), by key:
        the names recall step 2 compares by spelling, read on every such recall, so it
        is a cheap listing (callers confirm a key with resolve_names)."""
        ...
