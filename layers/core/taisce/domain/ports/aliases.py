"""Entities and aliases (domain/aliases.py): a merged name is an alias of one entity.

Writes resolve an alias to its entity, so an alias never holds facts of its own.
"""

from __future__ import annotations

from typing import Protocol

from ..model import Alias, EntityName, MergeResult


class AliasStore(Protocol):
    """Merging names into entities, and listing what was merged."""

    def merge_entities(
        self, project: str, alias_key: str, alias_text: str, into_key: str, into_text: str
    ) -> MergeResult:
        """Make `alias_key` an alias of the entity `into_key` (or of the entity that name
        is an alias of), checked by domain.aliases.plan_merge: re-key the alias's facts
        (both directions) and its name counts, report and vector marks to the target,
        and re-point the alias's own aliases. All or nothing, or re-runnable to the end
        (DynamoDB); merging again into the same entity changes nothing more."""
        ...

    def aliases(self, project: str) -> list[Alias]:
        """Every alias of the project, by alias key."""
        ...

    def alias_page(self, project: str, after: str | None, limit: int) -> list[Alias]:
        """Up to `limit` aliases in the order of their listing (by alias key; on
        DynamoDB by its key's sort key), those after the alias key `after` only."""
        ...

    def entity_names(self, project: str, limit: int, offset: int = 0) -> list[EntityName]:
        """Up to `limit` entities named by a live fact (not aliases), by key, from the
        `offset`-th."""
        ...

    def proposal_offset(self, project: str) -> int:
        """Where the next proposals request starts comparing this partition's names
        (an offset into entity_names; 0 when none was kept)."""
        ...

    def set_proposal_offset(self, project: str, offset: int) -> None:
        """Keep it, under the partition's project and a hash of the partition (no name
        and no user id is written)."""
        ...
